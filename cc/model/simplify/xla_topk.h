// Which sorts XLA's CPU backend runs as its top-k kernel.
//
// XLA CPU's TopkRewriter replaces a sort of which only the first k columns
// are read by a call of its top-k kernel: one pass over the keys instead of
// a sort, whose comparator XLA CPU calls once per comparison (a 64 x 65,536
// f32 sort-then-slice runs in 9.8 ms, as the topk op does; sorted, the same
// keys take seconds). The conditions are XLA's: TensorFlow's tf.math.top_k
// meets them, exla's merge of candidates (topk_merge.h), which sorts indices
// gathered from earlier trips, does not.
#ifndef EXLA_MODEL_SIMPLIFY_XLA_TOPK_H_
#define EXLA_MODEL_SIMPLIFY_XLA_TOPK_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Whether `sort` becomes XLA CPU's top-k: f32 keys of rank 1 or 2, sorted
// alone or with an s32 iota along the sorted dimension (possibly
// broadcast), by a greater-than comparator, every result read only through
// slices of the first k entries along the sorted dimension (the same k, all
// of any batch dimension).
bool XlaRunsAsTopK(const HloInstruction& sort);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_XLA_TOPK_H_
