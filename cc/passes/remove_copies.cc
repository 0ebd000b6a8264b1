#include "passes/remove_copies.h"

#include <vector>

namespace exla {

bool RemoveCopies::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> copies;
    for (const auto& instruction : computation->instructions()) {
      // Layout-changing copies carry meaning only after layout assignment,
      // which runs later inside XLA; a copy with control edges orders
      // something and is kept.
      if (instruction->Is(HloOpcode::kCopy) && instruction->control_predecessors().empty() &&
          instruction->control_successors().empty()) {
        copies.push_back(instruction.get());
      }
    }
    for (HloInstruction* copy : copies) {
      HloInstruction* operand = copy->operand(0);
      if (copy->shape() == operand->shape()) {
        computation->ReplaceInstruction(copy, operand);
      } else {
        // A layout-changing copy: a reshape to the same dimensions is the
        // same value and keeps the layout the program asked for.
        HloInstruction* reshape = computation->Add(HloOpcode::kReshape, copy->shape(), {operand}, copy->name());
        computation->ReplaceInstruction(copy, reshape);
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
