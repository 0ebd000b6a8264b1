#include "passes/tensor_splitter/sort_as_topk.h"

#include <optional>
#include <vector>

#include "analysis/front_slice.h"
#include "ir/builder.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

// The comparator `compare(p0, p1), direction=GT`, in total order for
// floating point: the larger value first.
bool IsGreaterThan(const HloComputation* comparator, PrimitiveType type) {
  if (comparator == nullptr || comparator->root() == nullptr) return false;
  HloInstruction* lhs = nullptr;
  HloInstruction* rhs = nullptr;
  HloInstruction* root = comparator->root();
  if (!Match(root, m::OpWithOpcode(HloOpcode::kCompare, m::Parameter().Bind(&lhs),
                                   m::Parameter().Bind(&rhs)))) {
    return false;
  }
  const bool total_order = root->comparison_order() == ComparisonOrder::kTotal;
  return lhs == comparator->parameter(0) && rhs == comparator->parameter(1) &&
         root->comparison_direction() == ComparisonDirection::kGt &&
         (IsFloatingPointType(type) ? total_order : IsIntegralType(type));
}

// sort(values, iota), dimensions={last}, is_stable=true, the greater first.
bool IsStableDescendingArgSort(HloInstruction* sort) {
  HloInstruction* values = nullptr;
  HloInstruction* iota = nullptr;
  if (!Match(sort, m::OpWithOpcode(HloOpcode::kSort, m::Op(&values).IsArray(),
                                   m::OpWithOpcode(HloOpcode::kIota).Bind(&iota)))) {
    return false;
  }
  const int64_t last = values->shape().rank() - 1;
  return last >= 0 && sort->dimensions() == std::vector<int64_t>{last} &&
         sort->RawAttribute("is_stable") == std::optional<std::string>("true") &&
         iota->IntAttribute("iota_dimension") == last &&
         iota->shape().element_type() == PrimitiveType::kS32 &&
         iota->shape().dims() == values->shape().dims() &&
         IsGreaterThan(sort->CalledComputation("to_apply"), values->shape().element_type());
}

// The k every use of the sort reads (through get-tuple-element and a
// first-k slice), or 0 when some use reads more or differently.
int64_t SharedK(const HloInstruction* sort) {
  int64_t k = 0;
  for (const HloInstruction* gte : sort->users()) {
    if (!gte->Is(HloOpcode::kGetTupleElement) || gte->users().empty()) return 0;
    for (const HloInstruction* slice : gte->users()) {
      const int64_t columns = FrontOfDimension(*slice, slice->shape().rank() - 1);
      if (columns <= 0 || (k != 0 && columns != k)) return 0;
      k = columns;
    }
  }
  return k;
}

}  // namespace

bool RewriteSortSlicesAsTopK(HloComputation* computation, int64_t threshold) {
  bool changed = false;
  for (HloInstruction* sort : computation->MakeInstructionPostOrder()) {
    if (!IsStableDescendingArgSort(sort)) continue;
    const Shape& values = sort->operand(0)->shape();
    const int64_t k = SharedK(sort);
    if (values.ByteSize() <= threshold || k <= 0 || k >= values.dims().back()) continue;
    std::vector<int64_t> dims = values.dims();
    dims.back() = k;
    HloInstruction* topk = computation->Add(
        HloOpcode::kTopK,
        Shape::Tuple({Shape::Array(values.element_type(), dims), Shape::Array(PrimitiveType::kS32, dims)}),
        {sort->operand(0)}, sort->name() + ".topk");
    topk->SetAttribute("k", std::to_string(k));
    topk->SetAttribute("largest", "true");
    HloBuilder b(computation);
    for (HloInstruction* gte : std::vector<HloInstruction*>(sort->users())) {
      HloInstruction* part = b.GetTupleElement(topk, *gte->IntAttribute("index"));
      for (HloInstruction* slice : std::vector<HloInstruction*>(gte->users())) {
        slice->ReplaceAllUsesWith(part);
      }
    }
    changed = true;
  }
  return changed;
}

}  // namespace exla
