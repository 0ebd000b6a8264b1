// Literals a loop only carries, read as literals inside the loop.
//
// A loop's state may carry a literal its body returns unchanged: the zero a
// TensorFlow loop passes in as the initial value of its reductions, a bound
// of iterations. XLA reads such an element in the body and condition as the
// literal itself (its while-loop constant sinking; and a module that comes
// in as StableHLO has the element dropped from the state already, the
// literal captured by the loop's regions). What reads it then reads a
// literal, and the simplifier's rewrites that need one see it: a sum of
// row sums, each starting from a zero the loop carries, is then a reduction
// of the rows' input over both dimensions (reduce_of_reduce.h), which may
// be long enough for a tree reduction that stores that input
// (expand/tree_reduction.h).
#ifndef EXLA_MODEL_SIMPLIFY_LOOP_CONSTANT_SINKING_H_
#define EXLA_MODEL_SIMPLIFY_LOOP_CONSTANT_SINKING_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Makes every read, in a while loop's body and condition, of a state element
// that starts as a literal and that the body returns unchanged read a copy
// of that literal instead. The element stays in the state (what the loop
// holds is loop_simplifier.h's question).
class LoopConstantSinking : public HloPass {
 public:
  std::string_view name() const override { return "loop-constant-sinking"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_LOOP_CONSTANT_SINKING_H_
