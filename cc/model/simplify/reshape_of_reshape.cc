#include "model/simplify/reshape_of_reshape.h"

#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

bool IsArrayReshape(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kReshape) && instruction.operand_count() == 1 &&
         instruction.shape().IsArray() && instruction.operand(0)->shape().IsArray();
}

// What the reshape `instruction` stands for: its operand where the shapes
// are equal, one reshape of the inner operand where it reshapes a reshape
// (in post order the inner one is already merged, so a chain becomes one
// reshape), or nullptr.
HloInstruction* MergedReshape(const HloInstruction& instruction) {
  if (!IsArrayReshape(instruction)) return nullptr;
  HloInstruction* source = instruction.operand(0);
  if (IsArrayReshape(*source)) source = source->operand(0);
  if (source->shape() == instruction.shape()) {
    return instruction.parent()->root() == &instruction ? nullptr : source;
  }
  if (source == instruction.operand(0)) return nullptr;
  return instruction.parent()->Add(HloOpcode::kReshape, instruction.shape(), {source},
                                   instruction.name() + ".merged");
}

}  // namespace

bool ReshapeOfReshape::Run(HloModule* module) { return ApplyReplacements(module, MergedReshape); }

}  // namespace exla
