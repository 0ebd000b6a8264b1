#include "model/simplify/sort_simplifier.h"

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

bool IsMultiArraySort(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kSort) && instruction.shape().IsTuple() && instruction.operand_count() > 1;
}

bool HasMultiArraySort(const HloComputation& computation) {
  for (const auto& instruction : computation.instructions()) {
    if (IsMultiArraySort(*instruction)) return true;
  }
  return false;
}

// The arrays of `sort` XLA keeps: those whose results something reads and
// those the comparator reads (parameters 2i and 2i + 1 compare array i).
// Empty when XLA cannot tell (the sort's tuple is read as a whole).
std::set<int> KeptArrays(const HloInstruction& sort) {
  std::set<int> kept;
  if (sort.parent()->root() == &sort) return {};
  for (const HloInstruction* user : sort.users()) {
    if (!user->Is(HloOpcode::kGetTupleElement)) return {};
    kept.insert(static_cast<int>(user->IntAttribute("index").value_or(0)));
  }
  const HloComputation* comparator = sort.CalledComputation("to_apply");
  if (comparator == nullptr) return {};
  for (const HloInstruction* parameter : comparator->parameters()) {
    if (parameter->user_count() > 0) kept.insert(static_cast<int>(parameter->parameter_number() / 2));
  }
  return kept;
}

// Rewrites `sort` in place (it keeps its step in the computation's order)
// without the arrays nothing reads. The comparator keeps its parameters:
// the model never runs it. Returns whether it changed `sort`.
bool ShrinkSort(HloInstruction* sort) {
  const std::set<int> kept = KeptArrays(*sort);
  if (kept.empty() || static_cast<int>(kept.size()) == sort->operand_count()) return false;
  std::vector<HloInstruction*> arrays;
  std::vector<Shape> shapes;
  for (int i : kept) {
    arrays.push_back(sort->operand(i));
    shapes.push_back(sort->operand(i)->shape());
  }
  sort->DetachOperands();
  for (HloInstruction* array : arrays) sort->AppendOperand(array);
  *sort->mutable_shape() = kept.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  const std::vector<HloInstruction*> reads = sort->users();
  for (HloInstruction* read : reads) {
    const int64_t index = read->IntAttribute("index").value_or(0);
    if (kept.size() == 1) {
      read->ReplaceAllUsesWith(sort);  // the read is left dead
    } else {
      read->SetIntAttribute("index", std::distance(kept.begin(), kept.find(static_cast<int>(index))));
    }
  }
  return true;
}

}  // namespace

bool SortSimplifier::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    if (!HasMultiArraySort(*computation)) continue;
    std::vector<HloInstruction*> sorts;
    for (const auto& instruction : computation->instructions()) {
      if (IsMultiArraySort(*instruction)) sorts.push_back(instruction.get());
    }
    bool changed = false;
    for (HloInstruction* sort : sorts) changed = ShrinkSort(sort) || changed;
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
