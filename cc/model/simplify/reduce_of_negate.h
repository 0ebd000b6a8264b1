// XLA's algebraic simplifier takes a negation out of a sum.
//
// A sum (a reduce whose reducer adds its two parameters, from zero) of a
// negated array becomes the negation of the array's sum: the negation then
// runs on the small result, and the array itself is what the reduce reads.
// The memory model must see it: a long sum is a tree reduction that
// stores its input (expand/tree_reduction.h), and where the array is also
// summed over another dimension, XLA stores it once where the model would
// store it and its negation.
#ifndef EXLA_MODEL_SIMPLIFY_REDUCE_OF_NEGATE_H_
#define EXLA_MODEL_SIMPLIFY_REDUCE_OF_NEGATE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites each sum from zero of a negate into the negate of the sum of
// its operand, and removes what that leaves dead.
class ReduceOfNegate : public HloPass {
 public:
  std::string_view name() const override { return "reduce-of-negate"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REDUCE_OF_NEGATE_H_
