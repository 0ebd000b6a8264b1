// One element per row, read or written at a per-row index along the
// dimension a softmax normalises: JAX's take_along_axis (the label's logit in
// optax's cross entropy) is a gather with a batching dimension, and its
// gradient a scatter-add into zeros. The splitter cannot slice either along
// the indexed dimension, so a cross entropy over a large vocabulary kept its
// logits whole. Where the tensor is above the threshold, both are rewritten
// into what each slice can compute on its own: the element is the sum over
// the row of select(iota == index, x, -0) (exact: one term, and -0 leaves it
// unchanged, its sign included), and the scatter is select(iota == index,
// x + update, x). The rewritten forms cost a pass over the row, which the
// split loop makes anyway.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_TAKE_ALONG_AXIS_H_
#define EXLA_PASSES_TENSOR_SPLITTER_TAKE_ALONG_AXIS_H_

#include <cstdint>

#include "ir/computation.h"

namespace exla {

// Rewrites every such gather whose operand, and every such scatter whose
// result, is larger than `threshold` bytes in `computation`. Returns whether
// it changed anything.
bool RewriteTakeAlongAxis(HloComputation* computation, int64_t threshold);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_TAKE_ALONG_AXIS_H_
