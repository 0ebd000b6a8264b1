// XLA's algebraic simplifier folds a pad into the reduce-window that reads
// it.
//
// A reduce-window of a pad whose padding value is the reduction's initial
// value reads the pad's operand instead: the pad's edges become the
// window's padding and its interior padding the window's base dilation
// (lhs_dilate). The pad is then never written. The memory model must see
// it: a reduce-window folds no producer into its loop, so the model would
// otherwise store the padded array (the gradient of an average pool pads
// the pooled gradient to more than the pool's input) where XLA stores only
// the small operand.
#ifndef EXLA_MODEL_SIMPLIFY_PAD_INTO_REDUCE_WINDOW_H_
#define EXLA_MODEL_SIMPLIFY_PAD_INTO_REDUCE_WINDOW_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Makes each reduce-window of a foldable pad read the pad's operand, with
// the pad in its window, and removes what that leaves dead.
class PadIntoReduceWindow : public HloPass {
 public:
  std::string_view name() const override { return "pad-into-reduce-window"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_PAD_INTO_REDUCE_WINDOW_H_
