// XLA's while loop simplifier: the elements of a loop's state it drops as dead.
//
// A loop's state can carry an element that nothing reads once the loop is
// done and that, inside the loop, feeds nothing but its own next value: a
// top-k's indices kept beside its values when only the values leave the
// loop, a counter nobody compares. Before it assigns buffers, XLA's while
// loop simplifier removes such an element from the state, with the work
// that computes it (measured: the indices of a top-k in a loop of which the
// entry reads only the values get no buffer, and the sort that computed
// them then sorts the values alone). The memory model predicts the module
// without them.
//
// The model removes the elements XLA finds one by one (nothing read after
// the loop, nothing but their own update in the body, the condition not
// reading them); groups of elements that only feed each other, which XLA
// removes too, stay: the model errs high.
#ifndef EXLA_MODEL_SIMPLIFY_DEAD_LOOP_ELEMENTS_H_
#define EXLA_MODEL_SIMPLIFY_DEAD_LOOP_ELEMENTS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Removes from the state of every while loop over a flat tuple of arrays
// the elements that are dead: read by no get-tuple-element of the loop's
// result, not read by its condition, and feeding in its body only their own
// update (no other element, nothing with a side effect); then removes what
// that leaves dead. Loops whose body or condition something else calls, or
// whose state is read other than element by element, are left as they are.
class DeadLoopElements : public HloPass {
 public:
  std::string_view name() const override { return "dead-loop-elements"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_DEAD_LOOP_ELEMENTS_H_
