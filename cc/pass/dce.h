// Dead code elimination: removes instructions whose values nobody uses and
// computations that nothing calls.
#ifndef EXLA_PASS_DCE_H_
#define EXLA_PASS_DCE_H_

#include <unordered_set>

#include "pass/pass.h"

namespace exla {

class DeadCodeElimination : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  bool Run(HloModule* module) override;
  bool IsCleanup() const override { return true; }
};

// Whether `instruction` has a side effect, itself or in anything it calls:
// DCE keeps it even if nothing reads its value.
bool HasSideEffect(const HloInstruction& instruction);

// Whether `instruction`'s value is read: it has a user or is its
// computation's root.
bool IsUsed(const HloInstruction& instruction);

// Removes the dead instructions of one computation (not its callees); used by
// passes that leave dead code behind between their own iterations.
bool RemoveDeadInstructions(HloComputation* computation);

// Removes `instruction` if it is dead, then those of its operands that became
// dead and are in `tracked` (a pass's set of instructions it may delete),
// erasing every removed instruction from `tracked`.
void RemoveDeadChain(HloInstruction* instruction, std::unordered_set<HloInstruction*>* tracked);

}  // namespace exla

#endif  // EXLA_PASS_DCE_H_
