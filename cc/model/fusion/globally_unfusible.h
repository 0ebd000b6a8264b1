// XLA's instruction fusion refuses to duplicate a producer whose copies
// would read more memory than its one buffer, unless every path from it to
// each reader fuses (InstructionFusion::ComputeGloballyUnfusible).
//
// Duplicating a producer into two loops makes each loop read the
// producer's operands. Where it reads at most one large operand, or no
// more elements than it writes, that costs nothing more than reading its
// buffer. Otherwise XLA duplicates it only if it can be fused on all paths
// to each reader: if a value between the producer and a reader is itself
// written out (a loop's result, read by a tuple), the producer would be
// read both fused and from that value, so XLA writes the producer once
// instead, and both readers read its buffer.
#ifndef EXLA_MODEL_FUSION_GLOBALLY_UNFUSIBLE_H_
#define EXLA_MODEL_FUSION_GLOBALLY_UNFUSIBLE_H_

#include "ir/instruction.h"

namespace exla {

// Whether a copy of `producer` in each of several loops would read more
// memory than its buffer: it reads more than one operand as large (in true
// rank) as its result, and more elements than it writes.
bool CopiesReadMore(const HloInstruction& producer);

// Whether XLA writes `producer`, read by several instructions, to a buffer
// of its own rather than fuse a copy into each: its copies would read more
// (CopiesReadMore), and on some path to a reader a value is written out.
bool GloballyUnfusible(const HloInstruction& producer);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_GLOBALLY_UNFUSIBLE_H_
