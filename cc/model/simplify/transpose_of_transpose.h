// XLA's algebraic simplifier merges a transpose of a transpose into one
// transpose of the first one's operand, and removes it where the two
// permutations undo each other (AlgebraicSimplifierVisitor::
// HandleTranspose).
//
// TensorFlow's programs transpose back and forth (a gradient transposes
// what the forward pass transposed). Two transposes that cancel leave the
// value's readers reading it elementwise: a loop after it then writes over
// the value's buffer, as XLA's does, where the model would keep both.
#ifndef EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_TRANSPOSE_H_
#define EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_TRANSPOSE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites each transpose of a transpose into one transpose (the composed
// permutation) of the inner one's operand, or into that operand where the
// composition is the identity, and removes what that leaves dead.
class TransposeOfTranspose : public HloPass {
 public:
  std::string_view name() const override { return "transpose-of-transpose"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_TRANSPOSE_H_
