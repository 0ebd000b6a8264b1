// XLA's algebraic simplifier merges a reshape of a reshape into one reshape
// of the first one's operand, and removes a reshape to the shape its
// operand already has (AlgebraicSimplifierVisitor::HandleReshape).
//
// JAX writes `x[:, None, :]` and its inverse as such chains (a reshape, an
// identity broadcast, a reshape back). Left in the module, each reshape is
// a bitcast XLA would schedule as a step of its own: the loops reading x
// through it would become ready one step later in the breadth-first
// schedule than in XLA's, which reads x itself, and a large value would
// come alive before, not after, the one it overlaps in XLA's plan.
#ifndef EXLA_MODEL_SIMPLIFY_RESHAPE_OF_RESHAPE_H_
#define EXLA_MODEL_SIMPLIFY_RESHAPE_OF_RESHAPE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites each reshape of a reshape into one reshape of the inner one's
// operand, and each reshape to its operand's shape into that operand (a
// computation's result is left: XLA copies it into the result, which the
// model reads the reshape as), and removes what that leaves dead.
class ReshapeOfReshape : public HloPass {
 public:
  std::string_view name() const override { return "reshape-of-reshape"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_RESHAPE_OF_RESHAPE_H_
