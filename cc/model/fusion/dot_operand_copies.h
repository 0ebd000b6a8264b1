// The transposed copies XLA's CPU backend makes of the operands of dots.
//
// XLA CPU multiplies matrices with a GEMM over row-major operands: it
// rewrites every dot (DotDecomposer) so that each operand has its batch
// dimensions first, then its free and contracting dimensions each as one
// block (either block may come first: the GEMM takes a transposed
// operand). An operand whose buffer holds its dimensions in another order
// is first transposed into a copy. Transpose folding lets a dot read
// through a transpose of its operand (instruction_fusion.h); the order that
// counts is then that of the transposed buffer's dimensions.
#ifndef EXLA_MODEL_FUSION_DOT_OPERAND_COPIES_H_
#define EXLA_MODEL_FUSION_DOT_OPERAND_COPIES_H_

#include <utility>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// The instruction whose buffer operand `operand` of the dot `dot` reads:
// the operand, or what a transpose folded into the dot transposes.
const HloInstruction* DotOperandBuffer(const HloInstruction& dot, int operand);

// The order of the dimensions of the buffer (DotOperandBuffer) in the
// transposed copy XLA makes for operand `operand` of `dot` (its dot
// decomposition's canonical form: batch, free then contracting dimensions
// for the left operand, batch, contracting then free for the right one),
// dimensions of size 1 left out. Copies of one buffer in the same order
// are one (XLA's CSE merges them).
std::vector<int64_t> DotOperandOrder(const HloInstruction& dot, int operand);

// Whether XLA copies operand `operand` of the dot `dot` into a transposed
// buffer before the dot reads it (dimensions of size 1 are free to move).
bool DotTransposesOperand(const HloInstruction& dot, int operand);

// The dot operands that read the buffer of `producer` through a
// transposed copy (pairs of dot and operand index), in the order of
// `producer`'s users.
std::vector<std::pair<const HloInstruction*, int>> TransposedDotReads(const HloInstruction& producer);

// Whether XLA writes the loop-fusible `producer` straight into the
// transposed copies its readers need: every reader is a dot that reads it
// transposed, so fusion folds it into the copy (one copy per such read),
// which, being a transpose, is never written over the producer's operands.
bool WrittenTransposed(const HloInstruction& producer);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_DOT_OPERAND_COPIES_H_
