// XLA CPU's tree reduction rewriter: a long reduction is summed as a tree.
//
// For accuracy, XLA CPU rewrites a reduction that folds some dimension of
// more than 32 elements into a reduce-window over windows of 32 elements of
// each reduced dimension, which reads its input from memory, then a reduce
// of the partial sums. A reduction over shorter dimensions (all of a 32x16
// block) stays one loop. Fusion then cannot fold the reduction's input into
// it, and the partial sums are scratch of the reduction.
#ifndef EXLA_MODEL_EXPAND_TREE_REDUCTION_H_
#define EXLA_MODEL_EXPAND_TREE_REDUCTION_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// XLA CPU sums more than this many elements per result as a tree (a
// reduce-window over windows of this size, then a reduce), for accuracy.
inline constexpr int64_t kTreeReductionWindow = 32;

// Whether XLA CPU rewrites the reduction `instruction` into a tree.
bool IsTreeReduction(const HloInstruction& instruction);

// The partial results per result the tree of `reduce` leaves (windows cover
// each reduced dimension in steps of the window).
int64_t TreeReductionPartials(const HloInstruction& reduce);

// Bytes of the transposed copy of its input that the tree of `reduce`
// reads, or 0. XLA's ReshapeMover (reshape_mover.cc), which runs after the
// tree reduction rewriter, sinks a transpose below the elementwise ops that
// read it whenever their other operands are literals or broadcasts it can
// transpose for free, until it reaches a reader that is not elementwise:
// the reduce-window. The input is then computed in the untransposed order,
// and layout assignment gives the reduce-window a row-major transposing
// copy of it. Where the input has other readers and is expensive to
// recompute (an exponential), XLA writes the input and the copy both
// (softmax: the exponential, and its copy for the row sums); otherwise
// the input is fused into the copy and the model's one buffer stands for it.
// The copy is one value (buffers/scratch.cc): like the input, it may take
// an entry result's allocation, and the input, defined first, tries first.
int64_t TreeReductionLayoutCopyBytes(const HloInstruction& reduce);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_TREE_REDUCTION_H_
