// XLA's algebraic simplifier folds a reduction of a reduction, before fusion.
//
// A reduce whose input is another reduce with the same initial value and
// an equivalent combiner (the same computation, or both an add, a multiply,
// an and or an or of their two parameters) becomes one reduce of the inner
// input over the dimensions of both. XLA does this whatever else reads the
// inner reduce: a mean of row sums, where the row sums are used again,
// becomes a second reduction over the whole input, which the inner reduce
// keeps computing for its other readers. The memory model must see it: the
// merged reduction may fold dimensions long enough for XLA CPU's tree
// reduction (expand/tree_reduction.h), which stores its whole input, the
// n x m x d differences of a mean of squared distances, say.
#ifndef EXLA_MODEL_SIMPLIFY_REDUCE_OF_REDUCE_H_
#define EXLA_MODEL_SIMPLIFY_REDUCE_OF_REDUCE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites every reduce of a reduce (through converts to the same type,
// which the simplifier removes first) into one reduce of the inner input,
// and removes what that leaves dead.
class ReduceOfReduce : public HloPass {
 public:
  std::string_view name() const override { return "reduce-of-reduce"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REDUCE_OF_REDUCE_H_
