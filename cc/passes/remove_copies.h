// remove-copies: replaces `copy(x)` by `x` (or, where the copy changes the
// layout, by a reshape to the same dimensions).
//
// A copy is the identity on values; TensorFlow emits them around variable
// updates. XLA's HLO -> StableHLO conversion (used to hand rewritten programs
// back to TensorFlow) rejects them, and XLA's own copy insertion re-creates
// whatever copies buffer assignment needs, so they can always go.
#ifndef EXLA_PASSES_REMOVE_COPIES_H_
#define EXLA_PASSES_REMOVE_COPIES_H_

#include "pass/pass.h"

namespace exla {

class RemoveCopies : public HloPass {
 public:
  std::string_view name() const override { return "remove-copies"; }
  bool Run(HloModule* module) override;
  bool IsCleanup() const override { return true; }
};

}  // namespace exla

#endif  // EXLA_PASSES_REMOVE_COPIES_H_
