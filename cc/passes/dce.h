// Dead code elimination: removes instructions whose values nobody uses and
// computations that nothing calls.
#ifndef EXLA_PASSES_DCE_H_
#define EXLA_PASSES_DCE_H_

#include "passes/pass.h"

namespace exla {

class DeadCodeElimination : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  bool Run(HloModule* module, const Options& options) override;
  bool IsCleanup() const override { return true; }
};

// Removes the dead instructions of one computation (not its callees); used by
// passes that leave dead code behind between their own iterations.
bool RemoveDeadInstructions(HloComputation* computation);

}  // namespace exla

#endif  // EXLA_PASSES_DCE_H_
