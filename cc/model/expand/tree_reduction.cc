#include "model/expand/tree_reduction.h"

#include <algorithm>
#include <vector>

#include "analysis/flops.h"

namespace exla {
namespace {

// The longest dimension a reduction folds.
int64_t LongestReducedDimension(const HloInstruction& reduce) {
  int64_t longest = 0;
  const Shape& input = reduce.operand(0)->shape();
  for (int64_t d : reduce.dimensions()) {
    if (d >= 0 && d < input.rank()) longest = std::max(longest, input.dim(static_cast<int>(d)));
  }
  return longest;
}

// Whether ReshapeMover can give `operand` the shape before a transpose by
// `permutation` for free: a literal, or a broadcast whose dimensions stay
// in order once permuted (ReshapeMover::CanTriviallyRearrange).
bool TriviallyTransposed(const HloInstruction& operand, const std::vector<int64_t>& permutation) {
  if (operand.Is(HloOpcode::kConstant)) return true;
  if (!operand.Is(HloOpcode::kBroadcast)) return false;
  const std::vector<int64_t>& dims = operand.dimensions();
  if (!std::is_sorted(dims.begin(), dims.end())) return false;
  std::vector<int64_t> moved;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(permutation.size())) return false;
    moved.push_back(permutation[static_cast<size_t>(d)]);
  }
  return std::is_sorted(moved.begin(), moved.end());
}

// The permutation of the transpose ReshapeMover sinks to the result of
// `value`, read by `value`'s one reader: `value` is that transpose, or an
// elementwise op over such values (one permutation) and trivially
// transposed operands. Empty if there is none.
std::vector<int64_t> SunkPermutation(const HloInstruction& value, int depth) {
  if (depth > 16 || !value.shape().IsArray()) return {};
  if (value.Is(HloOpcode::kTranspose)) {
    const std::vector<int64_t>& permutation = value.dimensions();
    return IsIdentityPermutation(permutation) ? std::vector<int64_t>{} : permutation;
  }
  if (!value.IsElementwise() || value.operand_count() == 0) return {};
  std::vector<int64_t> found;
  for (const HloInstruction* operand : value.operands()) {
    if (operand->Is(HloOpcode::kConstant) || operand->Is(HloOpcode::kBroadcast)) continue;
    if (operand->users().size() != 1) return {};  // another reader keeps the transpose there
    std::vector<int64_t> permutation = SunkPermutation(*operand, depth + 1);
    if (permutation.empty() || (!found.empty() && permutation != found)) return {};
    found = std::move(permutation);
  }
  if (found.empty()) return {};
  for (const HloInstruction* operand : value.operands()) {
    if ((operand->Is(HloOpcode::kConstant) || operand->Is(HloOpcode::kBroadcast)) &&
        !TriviallyTransposed(*operand, found)) {
      return {};
    }
  }
  return found;
}

}  // namespace

int64_t TreeReductionLayoutCopyBytes(const HloInstruction& reduce) {
  if (!IsTreeReduction(reduce)) return 0;
  const HloInstruction& input = *reduce.operand(0);
  if (input.users().size() < 2 || !IsExpensiveElementwise(input) || !input.IsElementwise()) return 0;
  return SunkPermutation(input, 0).empty() ? 0 : input.shape().ByteSize();
}

int64_t TreeReductionPartials(const HloInstruction& reduce) {
  int64_t partials = 1;
  const Shape& input = reduce.operand(0)->shape();
  for (int64_t d : reduce.dimensions()) {
    if (d < 0 || d >= input.rank()) continue;
    partials *= (input.dim(static_cast<int>(d)) + kTreeReductionWindow - 1) / kTreeReductionWindow;
  }
  return partials;
}

// XLA's tree reduction rewriter applies when some reduced dimension is
// longer than its window: a reduction of a 32x16 block is left whole.
bool IsTreeReduction(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kReduce) && instruction.shape().IsArray() &&
         instruction.operand_count() == 2 && instruction.operand(0)->shape().IsArray() &&
         LongestReducedDimension(instruction) > kTreeReductionWindow;
}

}  // namespace exla
