// topk-prefilter: a top-k of a long row reads only the k blocks of the row
// whose maxima are largest.
//
//   topk(x), k                       x: [..., n], n = nb * B
//   -> m  = per-block maximum of x   [..., nb]
//      bi = topk(m), k, sorted        the k blocks with the largest maxima,
//                                     in ascending block order
//      c  = those blocks of x         [..., k * B]
//      topk(c), k, its positions mapped back to positions in x
//
// XLA's CPU top-k runs a partial sort over every element of the row (about
// 2.7 ns each on a row of 10^6), far more than the distances of a kNN cost;
// the prefilter reads the row once for the block maxima and sorts only
// nb + k * B elements. B is the largest divisor of n up to both sqrt(n / k)
// (which balances those two) and 32 (beyond which XLA CPU no longer fuses
// the block maxima into one pass over the row); the rule applies only where
// n >= 64 * k * B: the candidates are at most a 64th of the row.
//
// Exact, ties and NaN included, for f32 (XLA CPU runs an f32 top-k in a
// kernel of its own; other types are left alone). That kernel orders
// elements by value in the total order (-NaN < -inf < ... < -0 < +0 < ...
// < +inf < +NaN), the lower index first among equal values: a strict order on elements, so "a ranks
// ahead of b" is well defined. A block's maximum is taken in that same total
// order (on the integers that order maps to, not with `maximum`, which
// propagates NaN and equates the zeros), so it is the value of the block's
// first-ranked element, its "leader". The top-k of the maxima ranks blocks
// by (maximum, block index), and since blocks are contiguous, ascending
// block index is ascending leader index: blocks rank exactly as their
// leaders do. Take an element e of a block U that was not chosen. U's leader
// ranks at or ahead of e, and each of the k chosen blocks' leaders ranks
// ahead of U's leader, so k elements rank ahead of e and e is not in the
// top k. The top k are therefore all among the candidates; the candidates
// lie in ascending order of their positions in x (chosen blocks in
// ascending order, each block in order), so the top-k over them breaks ties
// by the lower index exactly as the top-k over x did.
#ifndef EXLA_PASSES_TOPK_PREFILTER_H_
#define EXLA_PASSES_TOPK_PREFILTER_H_

#include "pass/pass.h"

namespace exla {

class TopKPrefilter : public HloPass {
 public:
  std::string_view name() const override { return "topk-prefilter"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_PASSES_TOPK_PREFILTER_H_
