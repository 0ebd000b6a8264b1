// algebraic-rewriter: replaces expressions that materialise a needlessly
// large tensor by equivalent ones that do not.
//
// Large constants with a structure (splat, diagonal, identity, broadcast)
// are rebuilt from broadcast/iota/compare/select, so that the executable
// holds no literal for them: see structured_literals.h. Then two rewrites,
// both rooted at a sum-reduction `reduce(..., add)`:
//
//  * Squared Euclidean distance. `sum_r (x[.., r] - y[.., r])^2`, where x and
//    y are broadcast into a common shape (x[:, None, :] - y[None, :, :]),
//    builds a tensor of shape n x m x d. The same value is
//        |x|^2[:, None] + |y|^2[None, :] - 2 x.y^T,
//    whose largest tensor is n x m. The result is clamped at zero with
//    maximum(., 0): the original is a sum of squares, the rewritten form can
//    round to a tiny negative number when x ~ y.
//    Matched in the forms TensorFlow and JAX emit: the square as
//    multiply(d, d) or power(d, 2); the difference in either order (the sign
//    disappears in the square); no-op and widening converts anywhere in the
//    chain; negate/abs under the square; reductions over any dimensions the
//    two sides share; batch dimensions shared by both sides. Per-dimension
//    scales applied after the subtraction (multiply/divide by a broadcast
//    that only varies along dimensions both sides have, e.g. kernel
//    lengthscales) are moved onto the small operands; weights applied after
//    the square (sum_r (x_r - y_r)^2 / l_r^2) are folded into the norms and
//    into one side of the dot. Scales applied before the broadcast need
//    nothing special: the broadcast operands are then simply x/l and y/l.
//    The clamp is left out when a weight may be negative (the original can
//    then be negative too).
//
//  * Sum of a product of broadcasts. `sum_r a[..] * b[..]` where a and b are
//    broadcasts of smaller tensors is a dot: dimensions both sides have and
//    the reduction removes are contracted, the ones it keeps are batch
//    dimensions. A reduced dimension only one side has is summed on that side
//    first.
//
// A rewrite is applied only when
//  - the tensor it removes is at least 8 times larger than every tensor the
//    replacement touches (the broadcast operands, the new intermediates, the
//    result). For a distance that factor is the feature dimension d; below
//    8 the original is as fast and more accurate (no cancellation);
//  - the removed chain has no other users (otherwise the big tensor stays
//    alive and nothing is gained);
//  - with --xla_tensor_size_threshold set, the removed tensor is above it.
//    Programs that fit stay untouched: XLA fuses such a chain into its
//    reduction while the reduced dimension is small (on the CPU up to about
//    32), so the big tensor never exists there and the dot form costs one
//    extra result-sized buffer. For larger d XLA materialises the whole
//    n x m x d tensor, and the rewrite cuts XLA's planned memory by ~d.
//
// Not rewritten: the L1 / Manhattan distance sum_r |x_r - y_r| has no
// factorisation into a dot, so an exact rewrite is impossible; it is left to
// tensor-splitter.
#ifndef EXLA_PASSES_ALGEBRAIC_REWRITER_H_
#define EXLA_PASSES_ALGEBRAIC_REWRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pass/pass.h"

namespace exla {

class AlgebraicRewriter : public HloPass {
 public:
  // Rewrites only reductions whose largest intermediate is above
  // `tensor_size_threshold` bytes (0: every one); smaller ones are left as
  // the program wrote them. The squared-distance expansion changes results
  // beyond the program's own rounding where points are close, so it runs
  // only with `fast_math`; the other rewrites only reassociate sums.
  explicit AlgebraicRewriter(int64_t tensor_size_threshold, bool fast_math = false)
      : tensor_size_threshold_(tensor_size_threshold), fast_math_(fast_math) {}
  std::string_view name() const override { return "algebraic-rewriter"; }
  bool Run(HloModule* module) override;

 private:
  // Constants of at least 1 MiB (or the threshold, when it is smaller).
  bool RebuildStructuredLiterals(HloComputation* computation, std::vector<std::string>* log);

  int64_t tensor_size_threshold_;
  bool fast_math_;
};

}  // namespace exla

#endif  // EXLA_PASSES_ALGEBRAIC_REWRITER_H_
