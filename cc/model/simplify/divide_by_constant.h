// XLA's algebraic simplifier turns a division by a literal into a product.
//
// A floating-point (or complex) array divided by a constant, or by a
// broadcast of one, becomes the array times the constant's reciprocal,
// folded when XLA compiles. The memory model must see it because fusion
// does: a division is expensive, and XLA CPU's fusion never computes an
// expensive value twice, so a division that a broadcast or a second loop
// reads gets a buffer of its own and is scheduled apart; the product is
// cheap and folds into every reader (fusion/instruction_fusion.cc).
#ifndef EXLA_MODEL_SIMPLIFY_DIVIDE_BY_CONSTANT_H_
#define EXLA_MODEL_SIMPLIFY_DIVIDE_BY_CONSTANT_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites every floating-point division of a value that is not a literal
// by a literal (or a broadcast of one) into a multiply of the same
// operands: the model never reads the literal's value, only its size,
// which its reciprocal shares.
class DivideByConstant : public HloPass {
 public:
  std::string_view name() const override { return "divide-by-constant"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_DIVIDE_BY_CONSTANT_H_
