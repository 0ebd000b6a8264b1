// Where XLA's CPU fusion stops folding a producer into its consumers
// because the fused loop would compute it too many times.
//
// A fused loop computes each value it folds in once per index at which it
// is read. Elementwise users read their operand at their own index; a user
// that changes the shape (a broadcast, a slice, a reshape, a reduction, a
// concatenation) computes an index of its own, and each such user is one
// more place where the loop emits the producer. XLA's CPU fusion counts the
// emissions per fusion (FusionNodeIndexingEvaluation) and refuses a
// producer that the loop would emit more than 15 times; the producer is
// then written to a buffer of its own, read where it is needed. A value
// that reaches a loop along many shape-changing paths (the keys of a
// counter-based random generator, the argument of a series expansion)
// is such a producer. Broadcasts are always folded (materialising them
// would cost more), but the count passes through them to their operand.
// A reduction, a concatenation or a pad keeps no computed element for
// reuse: XLA folds one only into a loop that emits it once, and only while
// a single instruction reads it.
#ifndef EXLA_MODEL_FUSION_FUSION_DUPLICATION_H_
#define EXLA_MODEL_FUSION_FUSION_DUPLICATION_H_

#include <unordered_set>

#include "ir/computation.h"

namespace exla {

// XLA's limit: a fused producer emitted more often than this is written out.
inline constexpr int64_t kAllowedCodeDuplication = 15;

// The most reductions XLA's CPU fusion puts in one fused loop (it splits
// larger ones to bound the size of the code it emits): a further
// reduction is written out and starts a loop of its own.
inline constexpr int64_t kMaxReductionsInFusion = 6;

// The instructions of `computation` that instruction_fusion.h's rules would fuse
// (HoldingOf gives kFused) but that XLA writes out because some fused loop
// would emit them more than kAllowedCodeDuplication times (a reduction,
// concatenation or pad: more than once, or read by more than one
// instruction), or would hold more than kMaxReductionsInFusion reductions. Computed from the
// fusion's root towards its producers, as XLA fuses: a producer written out
// starts a loop of its own, into which its producers fuse.
std::unordered_set<const HloInstruction*> OverDuplicatedProducers(const HloComputation& computation);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_FUSION_DUPLICATION_H_
