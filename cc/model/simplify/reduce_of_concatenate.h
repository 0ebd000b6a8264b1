// XLA's algebraic simplifier splits a reduction of a concatenation.
//
// A reduce that folds the dimension along which its input was concatenated
// becomes one reduce per concatenated operand, their results combined by
// the reducer element by element (AlgebraicSimplifier::HandleReduce, a map
// the map inliner then inlines). The concatenation is then no longer read
// by the reduce; if nothing else reads it, it is gone. The memory model
// must see it: XLA CPU keeps a long concatenation along the minor dimension
// out of fused loops (fusion/concatenate_fusion.h) and would store it.
#ifndef EXLA_MODEL_SIMPLIFY_REDUCE_OF_CONCATENATE_H_
#define EXLA_MODEL_SIMPLIFY_REDUCE_OF_CONCATENATE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites each single-input reduce of a concatenate over the concatenated
// dimension whose reducer is one binary operation of its two parameters
// into reduces of the operands joined by that operation, and removes what
// that leaves dead.
class ReduceOfConcatenate : public HloPass {
 public:
  std::string_view name() const override { return "reduce-of-concatenate"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REDUCE_OF_CONCATENATE_H_
