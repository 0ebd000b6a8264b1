// XLA's constant folding, before fusion.
//
// XLA's pipeline evaluates at compile time every instruction that reads
// only literals (at least one literal, the others literals, broadcasts of
// literals or iotas) and replaces it by the literal it computes: the
// transpose of a literal, a product of two, the slices of one. The result
// is a literal of the executable like any other (literals.h), kept in
// memory when it is an array, and no longer a value computed at run time.
// Frameworks that capture data as constants (GPflow's inducing points and
// training inputs, Keras' masks) make many such instructions. XLA does not
// fold broadcasts and iotas (they would only grow), nor loops, random
// numbers or calls into libraries.
#ifndef EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_
#define EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every instruction XLA folds by a literal of its shape (folding
// the literals' readers in turn), and removes the instructions left dead.
// The literal's text stands for the expression it was folded from, not its
// value: equal expressions give equal literals.
class ConstantFolding : public HloPass {
 public:
  std::string_view name() const override { return "constant-folding"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_
