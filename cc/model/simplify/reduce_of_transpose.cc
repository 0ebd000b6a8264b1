#include "model/simplify/reduce_of_transpose.h"

#include <algorithm>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

// XLA folds the transpose only where the result has at most one dimension:
// a higher-ranked result would need its own transpose (which XLA adds only
// in cases the model leaves alone).
bool IsVectorReduceOfTranspose(const HloInstruction& reduce) {
  if (!reduce.Is(HloOpcode::kReduce) || reduce.operand_count() != 2 || !reduce.shape().IsArray() ||
      reduce.shape().rank() > 1) {
    return false;
  }
  const HloInstruction& transpose = *reduce.operand(0);
  return transpose.Is(HloOpcode::kTranspose) && transpose.operand_count() == 1 &&
         transpose.shape().IsArray() &&
         static_cast<int64_t>(transpose.dimensions().size()) == transpose.shape().rank();
}

// Reads the transpose's operand instead, each reduced dimension named as
// the operand's dimension it was.
void FoldTranspose(HloInstruction* reduce) {
  HloInstruction* transpose = reduce->operand(0);
  const std::vector<int64_t>& permutation = transpose->dimensions();
  std::vector<int64_t> dimensions;
  for (int64_t d : reduce->dimensions()) dimensions.push_back(permutation[static_cast<size_t>(d)]);
  std::sort(dimensions.begin(), dimensions.end());
  reduce->ReplaceOperand(0, transpose->operand(0));
  reduce->SetIntListAttribute("dimensions", dimensions);
}

}  // namespace

bool ReduceOfTranspose::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsVectorReduceOfTranspose(*instruction)) continue;
      FoldTranspose(instruction);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
