#include "model/simplify/transpose_of_dot.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

// Batch dimensions 0..n-1 in some order, the same on both sides, and one
// free dimension on each: the form DotDecomposer gives every dot.
bool IsCanonicalDot(const HloInstruction& dot) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2 || !dot.shape().IsArray()) return false;
  const DotDimensions dims = dot.dot_dimensions();
  if (dims.lhs_batch != dims.rhs_batch) return false;
  std::vector<int64_t> batch = dims.lhs_batch;
  std::sort(batch.begin(), batch.end());
  if (!IsIdentityPermutation(batch)) return false;  // the batch dimensions lead
  for (int k = 0; k < 2; ++k) {
    const size_t rank = static_cast<size_t>(dot.operand(k)->shape().rank());
    if (dims.contracting(k).empty() || dims.contracting(k).size() + dims.batch(k).size() + 1 != rank) {
      return false;
    }
  }
  return true;
}

// A transpose that swaps the two free dimensions of a canonical dot it
// alone reads.
bool IsTransposeOfDot(const HloInstruction& transpose) {
  if (!transpose.Is(HloOpcode::kTranspose) || transpose.operand_count() != 1) return false;
  const HloInstruction& dot = *transpose.operand(0);
  if (dot.user_count() != 1 || !IsCanonicalDot(dot)) return false;
  std::vector<int64_t> swapped(static_cast<size_t>(dot.shape().rank()));
  std::iota(swapped.begin(), swapped.end(), 0);
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return transpose.dimensions() == swapped;
}

// The dot with swapped operands that `transpose` stands for, or nullptr.
HloInstruction* SwappedDot(const HloInstruction& transpose) {
  if (!IsTransposeOfDot(transpose)) return nullptr;
  HloInstruction* dot = transpose.operand(0);
  DotDimensions dims = dot->dot_dimensions();
  std::swap(dims.lhs_contracting, dims.rhs_contracting);
  HloInstruction* swapped = transpose.parent()->Add(HloOpcode::kDot, transpose.shape(),
                                                    {dot->operand(1), dot->operand(0)}, transpose.name() + ".dot");
  swapped->SetDotDimensions(dims);
  return swapped;
}

}  // namespace

bool TransposeOfDot::Run(HloModule* module) { return ApplyReplacements(module, SwappedDot); }

}  // namespace exla
