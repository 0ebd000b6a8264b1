// What XLA's TriangularSolveExpander holds in memory while a solve runs.
//
// XLA CPU has no kernel for triangular-solve: its TriangularSolveExpander
// (xla/service/triangular_solve_expander.cc, block size 128) rewrites a
// solve against an m x m matrix into blocks of min(m, 128) rows: it cuts
// the diagonal blocks out of the masked matrix (the last one padded with
// the identity to a whole block), inverts all of them together in a while
// loop whose state holds the blocks being inverted and an accumulator of
// the inverses (filled with a negated identity before the loop, from no
// operand), scales the inverses back, and then multiplies the right-hand
// side by each inverse block in turn. Every one of those arrays has the
// shape of all the padded blocks: batch x ceil(m/128) x block x block.
#ifndef EXLA_MODEL_EXPAND_TRIANGULAR_SOLVE_H_
#define EXLA_MODEL_EXPAND_TRIANGULAR_SOLVE_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Bytes of one array of all the padded diagonal blocks of the solve
// `solve` (batch x blocks x block x block elements of its matrix's type):
// the accumulator of inverses computed first, and each of the masked,
// scaled and unscaled blocks. 0 for anything but a triangular solve.
int64_t SolveBlocksBytes(const HloInstruction& solve);

// Bytes the expansion of `solve` holds while it runs, beside its operands:
// the larger of its two phases. While the loop runs, the accumulator of
// inverses and the arrays of blocks alive with it: with one block
// (m <= 128) the blocks are a view of the masked matrix, and one array
// more (the blocks being inverted) is alive beside the accumulator; with
// several, the blocks gathered out of the matrix are alive besides while
// the expansion masks and scales them: two arrays more; and the diagonal
// of the blocks. Then, while it multiplies the right-hand side, the
// scaled inverses (one array of blocks) and the result it writes.
int64_t SolveScratchBytes(const HloInstruction& solve);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_TRIANGULAR_SOLVE_H_
