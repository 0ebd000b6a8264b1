// XLA's algebraic simplifier folds a transpose into the reduce that reads it.
//
// A reduce whose result is a vector or a scalar reads the same elements in
// any order: AlgebraicSimplifierVisitor::HandleReduce makes it reduce the
// transpose's operand over the permuted dimensions, whatever else reads the
// transpose. This runs before XLA's tree reduction rewriter, so a long
// reduction then reads the untransposed value (the rewriter's reduce-window
// stores its input, expand/tree_reduction.h); and a sum of row sums read
// through a transpose becomes a reduce of a reduce, which ReduceOfReduce
// merges into one reduction of the whole input.
#ifndef EXLA_MODEL_SIMPLIFY_REDUCE_OF_TRANSPOSE_H_
#define EXLA_MODEL_SIMPLIFY_REDUCE_OF_TRANSPOSE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites every reduce of rank 0 or 1 that reads a transpose into a reduce
// of the transpose's operand, and removes what that leaves dead.
class ReduceOfTranspose : public HloPass {
 public:
  std::string_view name() const override { return "reduce-of-transpose"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REDUCE_OF_TRANSPOSE_H_
