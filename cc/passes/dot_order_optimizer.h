// dot-order-optimizer: matrix-chain reordering.
//
// A tree of dots whose inner products are used only inside the tree is a
// matrix chain M1 . M2 . ... . Mn; every parenthesisation computes the same
// value (up to floating-point reassociation) but the intermediates can differ
// enormously in size: (K.K).v builds an n x n matrix, K.(K.v) only vectors.
// The pass flattens each such tree, finds by dynamic programming the order
// that minimises first the largest intermediate and then the flops, and
// rebuilds the chain in that order when it is strictly better than the
// original.
//
// The chain is followed through transposes, reshapes that only insert or
// delete unit dimensions (TF wraps every matmul in both), multiplications
// and divisions by broadcast scalars and negations (collected and applied to
// the final, smallest, result). Factors are 2-D matrices or vectors, with any
// number of batch dimensions shared by the whole chain; a dot in the chain
// contracts exactly one dimension per side. An inner product used anywhere
// else is a leaf of the chain: it has to be computed anyway. Single dots are
// never touched.
#ifndef EXLA_PASSES_DOT_ORDER_OPTIMIZER_H_
#define EXLA_PASSES_DOT_ORDER_OPTIMIZER_H_

#include "pass/pass.h"

namespace exla {

class DotOrderOptimizer : public HloPass {
 public:
  std::string_view name() const override { return "dot-order-optimizer"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_PASSES_DOT_ORDER_OPTIMIZER_H_
