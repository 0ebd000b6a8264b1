#include "model/simplify/reduce_of_reshape.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

// For each result dimension of a reshape from `from` to `to`, the operand
// dimension it is unchanged from, or -1 where the reshape splits or merges
// it (ShapeUtil::DimensionsUnmodifiedByReshape). The dimensions are walked
// in groups of equal element counts; a group of one dimension on each side
// is unmodified. Groups of size-1 dimensions are matched only one to one,
// so an ambiguous group counts as modified: the fold is then not made.
std::vector<int64_t> UnmodifiedOperandDimensions(const Shape& from, const Shape& to) {
  std::vector<int64_t> unmodified(static_cast<size_t>(to.rank()), -1);
  int64_t i = 0, j = 0;
  while (i < from.rank() && j < to.rank()) {
    const int64_t first_i = i, first_j = j;
    int64_t a = from.dim(static_cast<int>(i++)), b = to.dim(static_cast<int>(j++));
    while (a != b) {
      if (a < b && i < from.rank()) {
        a *= from.dim(static_cast<int>(i++));
      } else if (b < a && j < to.rank()) {
        b *= to.dim(static_cast<int>(j++));
      } else {
        return unmodified;  // a zero-sized dimension: left alone
      }
    }
    if (i - first_i == 1 && j - first_j == 1) unmodified[static_cast<size_t>(first_j)] = first_i;
  }
  return unmodified;
}

// The operand dimensions the reduce folds once it reads the reshape's
// operand, or nullopt where a kept dimension is one the reshape changed.
std::optional<std::vector<int64_t>> FoldedOperandDimensions(const HloInstruction& reduce) {
  const HloInstruction& reshape = *reduce.operand(0);
  const Shape& operand = reshape.operand(0)->shape();
  const std::vector<int64_t> unmodified = UnmodifiedOperandDimensions(operand, reshape.shape());
  const std::vector<int64_t>& reduced = reduce.dimensions();
  std::vector<bool> kept(static_cast<size_t>(operand.rank()), false);
  for (int64_t d = 0; d < reshape.shape().rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    if (unmodified[static_cast<size_t>(d)] < 0) return std::nullopt;
    kept[static_cast<size_t>(unmodified[static_cast<size_t>(d)])] = true;
  }
  std::vector<int64_t> folded;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!kept[static_cast<size_t>(d)]) folded.push_back(d);
  }
  return folded;
}

bool IsReduceOfReshape(const HloInstruction& reduce) {
  if (!reduce.Is(HloOpcode::kReduce) || reduce.operand_count() != 2 || !reduce.shape().IsArray()) {
    return false;
  }
  const HloInstruction& reshape = *reduce.operand(0);
  return reshape.Is(HloOpcode::kReshape) && reshape.operand_count() == 1 &&
         reshape.shape().IsArray() && reshape.operand(0)->shape().IsArray();
}

}  // namespace

bool ReduceOfReshape::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsReduceOfReshape(*instruction)) continue;
      const std::optional<std::vector<int64_t>> folded = FoldedOperandDimensions(*instruction);
      if (!folded) continue;
      instruction->ReplaceOperand(0, instruction->operand(0)->operand(0));
      instruction->SetIntListAttribute("dimensions", *folded);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
