#include "model/simplify/replacements.h"

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {

bool ApplyReplacements(HloModule* module, const Replacement& replacement) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (HloInstruction* value = replacement(*instruction)) {
        instruction->ReplaceAllUsesWith(value);
        changed = true;
      }
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any |= changed;
  }
  return any;
}

}  // namespace exla
