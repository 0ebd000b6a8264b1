#include "passes/remove_copies.h"

#include <vector>

namespace exla {

bool RemoveCopies::Run(HloModule* module, const Options&) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> copies;
    for (const auto& instruction : computation->instructions()) {
      // Layout-changing copies carry meaning only after layout assignment,
      // which runs later inside XLA; a copy with control edges orders
      // something and is kept.
      if (instruction->Is("copy") && instruction->control_predecessors().empty() &&
          instruction->control_successors().empty()) {
        copies.push_back(instruction.get());
      }
    }
    for (HloInstruction* copy : copies) {
      computation->ReplaceInstruction(copy, copy->operand(0));
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
