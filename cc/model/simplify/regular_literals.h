// XLA computes a regular literal instead of keeping it.
//
// XLA's algebraic simplifier replaces an array literal of more than one
// element whose values follow a rule by instructions that compute them
// (AlgebraicSimplifierVisitor::HandleConstant, algebraic_simplifier.cc):
// one whose elements are all equal becomes a broadcast of a scalar
// literal, a vector 0, 1, 2, ... an iota, and an integer vector 0, s,
// 2s, ... an iota times s (LiteralBase::IsR1Iota and IsR1StridedIota,
// literal.cc). The memory model must see it: a literal is an allocation
// of the executable for the whole run (buffers/literals.h), where a
// broadcast or an iota folds into the loops that read it and is stored
// only where its reader fuses nothing (a dot) or as a result.
// Frameworks build such literals for band masks and indices
// (TensorFlow's MatrixBandPart: {0, 1, 2, 3}).
#ifndef EXLA_MODEL_SIMPLIFY_REGULAR_LITERALS_H_
#define EXLA_MODEL_SIMPLIFY_REGULAR_LITERALS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every array literal of more than one element that XLA computes
// (above) by what XLA computes it with, and removes the literals left
// dead. A literal whose values the model cannot read (elided, complex, a
// folded expression: constant_folding.h) is left: it errs high.
class RegularLiterals : public HloPass {
 public:
  std::string_view name() const override { return "regular-literals"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REGULAR_LITERALS_H_
