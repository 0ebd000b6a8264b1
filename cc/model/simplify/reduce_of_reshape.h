// XLA's algebraic simplifier folds a reshape into the reduce that reads it.
//
// A reshape that only regroups dimensions the reduce folds away changes no
// sum: AlgebraicSimplifierVisitor::HandleReduce makes the reduce read the
// reshape's operand and fold the operand's dimensions instead, whatever else
// reads the reshape. The reshape of a transposed value is a copy in XLA
// CPU's layouts; folded this way, a sum of it reads the value as it was
// computed (then ReduceOfTranspose takes the transpose out too), and a long
// sum becomes a tree reduction of the untransposed value.
#ifndef EXLA_MODEL_SIMPLIFY_REDUCE_OF_RESHAPE_H_
#define EXLA_MODEL_SIMPLIFY_REDUCE_OF_RESHAPE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rewrites every reduce of a reshape whose kept dimensions the reshape
// leaves as they were into a reduce of the reshape's operand, and removes
// what that leaves dead.
class ReduceOfReshape : public HloPass {
 public:
  std::string_view name() const override { return "reduce-of-reshape"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REDUCE_OF_RESHAPE_H_
