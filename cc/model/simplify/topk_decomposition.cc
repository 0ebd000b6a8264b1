#include "model/simplify/topk_decomposition.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/builder.h"
#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

// Whether `topk` is one XLA CPU decomposes into a sort of its keys alone:
// keys other than f32 (which its kernel takes), its values read, its
// indices not (in a computation without dead code, as XLA's when it
// decomposes; a read nothing uses does not count).
bool DecomposedToValuesSort(const HloInstruction& topk) {
  if (!topk.Is(HloOpcode::kTopK) || topk.operand_count() != 1 || !topk.shape().IsTuple() ||
      topk.shape().tuple_shapes().size() != 2 || topk.parent()->root() == &topk) {
    return false;
  }
  const Shape& keys = topk.operand(0)->shape();
  if (!keys.IsArray() || keys.rank() == 0 || keys.element_type() == PrimitiveType::kF32) return false;
  bool values_read = false;
  for (const HloInstruction* user : topk.users()) {
    if (!user->Is(HloOpcode::kGetTupleElement)) return false;
    const bool used = IsUsed(*user);
    if (used && user->IntAttribute("index").value_or(-1) != 0) return false;
    values_read = values_read || used;
  }
  return values_read;
}

HloComputation* Comparator(HloModule* module, HloComputation* before, PrimitiveType type, bool largest) {
  auto owned = std::make_unique<HloComputation>(module->UniqueName("topk_order"));
  HloComputation* order = module->AddComputationBefore(std::move(owned), before);
  HloBuilder b(order);
  const Shape scalar = Shape::Array(type, {});
  order->set_root(b.Compare(b.Parameter(0, scalar, "lhs"), b.Parameter(1, scalar, "rhs"),
                            largest ? ComparisonDirection::kGt : ComparisonDirection::kLt));
  return order;
}

void Decompose(HloInstruction* topk) {
  HloComputation* computation = topk->parent();
  HloInstruction* keys = topk->operand(0);
  const Shape& shape = keys->shape();
  const bool largest = topk->RawAttribute("largest") != "false";
  HloInstruction* sort = computation->Add(HloOpcode::kSort, shape, {keys}, topk->name() + ".sort");
  sort->SetIntListAttribute("dimensions", {shape.rank() - 1});
  sort->SetCalledComputation("to_apply",
                             Comparator(computation->parent(), computation, shape.element_type(), largest));
  const std::vector<int64_t> starts(shape.rank(), 0);
  const std::vector<int64_t> limits = topk->shape().tuple_shapes()[0].dims();
  HloInstruction* values = HloBuilder(computation).Slice(sort, starts, limits);
  const std::vector<HloInstruction*> reads = topk->users();
  for (HloInstruction* read : reads) {
    if (read->IntAttribute("index").value_or(-1) == 0) read->ReplaceAllUsesWith(values);
  }
}

}  // namespace

bool TopKDecomposition::Run(HloModule* module) {
  // Comparators are added to the module as it goes: walk a list taken first.
  std::vector<HloComputation*> computations;
  for (const auto& computation : module->computations()) computations.push_back(computation.get());
  bool any = false;
  for (HloComputation* computation : computations) {
    std::vector<HloInstruction*> topks;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kTopK)) topks.push_back(instruction.get());
    }
    if (topks.empty()) continue;
    // XLA removes dead code first: an index read only by dead code is unread.
    RemoveDeadInstructions(computation);
    topks.clear();
    for (const auto& instruction : computation->instructions()) {
      if (DecomposedToValuesSort(*instruction)) topks.push_back(instruction.get());
    }
    for (HloInstruction* topk : topks) Decompose(topk);
    if (!topks.empty()) RemoveDeadInstructions(computation);
    any = any || !topks.empty();
  }
  return any;
}

}  // namespace exla
