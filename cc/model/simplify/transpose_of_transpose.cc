#include "model/simplify/transpose_of_transpose.h"

#include <memory>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

bool IsTransposeOfTranspose(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kTranspose) && instruction.operand_count() == 1 &&
         instruction.operand(0)->Is(HloOpcode::kTranspose) && instruction.operand(0)->operand_count() == 1;
}

// Dimension i of the outer transpose is dimension outer[i] of the inner
// one, which is dimension inner[outer[i]] of the inner one's operand.
std::vector<int64_t> Composed(const HloInstruction& outer) {
  const std::vector<int64_t> inner = outer.operand(0)->dimensions();
  std::vector<int64_t> permutation;
  for (int64_t d : outer.dimensions()) permutation.push_back(inner[static_cast<size_t>(d)]);
  return permutation;
}

// Replaces the transpose of a transpose `outer` by one transpose of the
// inner one's operand, or by that operand.
void Merge(HloComputation* computation, HloInstruction* outer) {
  HloInstruction* source = outer->operand(0)->operand(0);
  const std::vector<int64_t> permutation = Composed(*outer);
  if (IsIdentityPermutation(permutation)) {
    outer->ReplaceAllUsesWith(source);
    return;
  }
  auto merged = std::make_unique<HloInstruction>(outer->name() + ".merged", HloOpcode::kTranspose, outer->shape());
  merged->AppendOperand(source);
  merged->SetIntListAttribute("dimensions", permutation);
  outer->ReplaceAllUsesWith(computation->AddInstruction(std::move(merged)));
}

}  // namespace

bool TransposeOfTranspose::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    // In post order, an inner transpose is merged before its readers are
    // looked at, so that a chain of three becomes one.
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsTransposeOfTranspose(*instruction)) continue;
      // A result that would be its operand is left: XLA copies it into the
      // result, which the model reads the two transposes as.
      if (computation->root() == instruction && IsIdentityPermutation(Composed(*instruction))) continue;
      Merge(computation.get(), instruction);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
