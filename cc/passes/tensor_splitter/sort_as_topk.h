// TensorFlow's top-k as XLA's: tf.math.top_k lowers to a stable sort of
// (values, iota) along the last dimension with a total-order "greater than"
// comparator, of which only the first k columns are read. That is exactly
// `topk(values), k=K, largest=true` (the larger value first in XLA's total
// order, the lower index first among equal ones; checked against TensorFlow
// with NaNs of both signs, signed zeros, infinities and ties), and in that
// form the tensor splitter can split it along the sorted dimension
// (passes/tensor_splitter/topk_merge.h), where a sort of a whole row cannot.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_SORT_AS_TOPK_H_
#define EXLA_PASSES_TENSOR_SPLITTER_SORT_AS_TOPK_H_

#include <cstdint>

#include "ir/computation.h"

namespace exla {

// Rewrites every such sort in `computation` whose values are larger than
// `threshold` bytes (one the splitter would otherwise leave whole): each
// first-k slice of its results reads the top-k instead. Returns whether
// anything changed; the sorts are left for dead-code removal.
bool RewriteSortSlicesAsTopK(HloComputation* computation, int64_t threshold);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_SORT_AS_TOPK_H_
