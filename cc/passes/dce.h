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

}  // namespace exla

#endif  // EXLA_PASSES_DCE_H_
