// Selections that merge: a top-k (XLA's `topk`) or an arg-min/arg-max (a
// reduce over (value, index) pairs, as tf.math.argmin and jnp.argmin emit it)
// split along the dimension it selects over.
//
// The k best of a row are among the k best of each chunk of the row, so a
// loop over chunks keeps the k best candidates seen so far and merges each
// chunk's k best into them; an arg-min keeps the best (value, index) pair the
// same way. Ties are broken as the unsplit program breaks them: XLA's top-k
// puts the lower index first among equal values, and so does the merge,
// which compares (value, index) pairs rather than relying on the order in
// which candidates arrive. Indices are global: a chunk's top-k positions get
// the chunk's offset added, an arg-min's index operand is already offset
// where the loop slices its iota.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_TOPK_MERGE_H_
#define EXLA_PASSES_TENSOR_SPLITTER_TOPK_MERGE_H_

#include <cstdint>

#include "ir/builder.h"
#include "ir/instruction.h"

namespace exla {

// The shape one chunk of `chunk` units gives: a top-k of a chunk shorter than
// k keeps the whole chunk.
Shape SelectionChunkShape(const HloInstruction& selection, int64_t chunk);

// The candidates before the first chunk, built outside the loop: for a top-k,
// k (value, index) pairs that every real element beats (the value last in
// XLA's total order, an index past every real one); for an arg-min, the
// reduce's own init values.
HloInstruction* InitialCandidates(HloBuilder& b, const HloInstruction& selection);

// One chunk's candidates from `clone`, the selection computed on the chunk:
// a top-k's indices are positions in the chunk and get the chunk's `offset`.
HloInstruction* ChunkCandidates(HloBuilder& b, HloInstruction* clone, HloInstruction* offset);

// The best of `so_far` and `chunk`, the loop's next candidates: for a top-k
// the first k of both lists sorted by (value, index); for an arg-min the
// reducer applied to the two pairs, the earlier chunk's first.
HloInstruction* MergeCandidates(HloBuilder& b, const HloInstruction& selection,
                                HloInstruction* chunk_clone, HloInstruction* so_far,
                                HloInstruction* chunk);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_TOPK_MERGE_H_
