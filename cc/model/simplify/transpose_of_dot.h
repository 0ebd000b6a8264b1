// XLA's algebraic simplifier turns the transpose of a matrix product into
// the product with its operands swapped.
//
// (AB)^T = B^T A^T: a transpose that swaps the two free dimensions of a
// dot, the dot's only reader, becomes a dot of the same operands in the
// other order, which writes the transposed result itself
// (AlgebraicSimplifierVisitor::HandleTranspose, for dots DotDecomposer has
// made canonical: batch dimensions first and alike on both sides, one free
// dimension a side). The memory model must see it: as a transpose, the
// dot's result is a buffer read through a permutation, which the
// elementwise loops that read the transpose cannot overwrite in place;
// XLA's dot writes its result where those loops then compute theirs.
#ifndef EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_DOT_H_
#define EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_DOT_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces each transpose of the free dimensions of a canonical dot that
// nothing else reads by the dot with its operands swapped.
class TransposeOfDot : public HloPass {
 public:
  std::string_view name() const override { return "transpose-of-dot"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_TRANSPOSE_OF_DOT_H_
