#include "model/expand/tree_reduction.h"

#include <algorithm>

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

}  // namespace

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
