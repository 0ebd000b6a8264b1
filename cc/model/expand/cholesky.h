// What XLA's CholeskyExpander holds in memory while a factorisation runs.
//
// XLA CPU has no kernel for cholesky: its CholeskyExpander
// (xla/service/cholesky_expander.cc, block size 128) factors an n x n
// matrix (lower; an upper factor is the transpose of the lower factor of
// the transposed matrix) in block columns of k = min(128, n - i) columns.
// For each it takes the panel a[i:, i:i+k], subtracts
// l[i:, :i] l[i:i+k, :i]^T when i > 0, factors the k x k diagonal block
// in an unblocked while loop (state: the block, its factor L, starting
// from zeros, an error flag and a lower-triangle mask; each step computes
// L L^T), writes L into the factor l, and solves the panel's other rows
// against L (a triangular solve: triangular_solve.h, one padded block of
// 128). At the end a select writes NaN where a pivot was not positive.
// With n <= 128 it is the unblocked loop on the whole matrix.
//
// Inlined, the expansion is scheduled breadth first with its caller: what
// it computes from no operand (the zero factors of every block column, the
// accumulator of inverses of every solve, the masks) runs first and stays
// alive until the block column that reads it. The first block's loop then
// holds all of them.
#ifndef EXLA_MODEL_EXPAND_CHOLESKY_H_
#define EXLA_MODEL_EXPAND_CHOLESKY_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Bytes the expansion of `cholesky` computes from no operand, alive from
// the start of its computation: with n <= 128 the pred[n,n] mask of the
// lower triangle; blocked, the zero k x k factor of each block column of
// more than one column, a 128 x 128 accumulator of inverses for each
// solve and the masks of the loops (pred[128,128], and one for a shorter
// last block). 0 for anything but a Cholesky factorisation.
int64_t CholeskyEarlyBytes(const HloInstruction& cholesky);

// Bytes the expansion of `cholesky` holds while it runs, beside its
// operand and its result. With n <= 128, L L^T and, for an upper factor,
// the factor l (a lower one is built in the result's buffer). Blocked,
// the largest over its phases of what is alive (the early values above
// included, see CholeskyEarlyBytesInScratch):
//  - the first block's loop: the early values, the rest of the first
//    panel sliced out of the matrix and the product L L^T; the block being
//    factored takes the result's buffer, which the factor l (built by
//    padding the first factor) takes only after the loop;
//  - each later block column's update: the slices of l it multiplies and
//    their product; then its loop: the block, L L^T, the rest of its panel;
//  - each solve: the rest of the panel and its scaled block (after the
//    first loop, where an upper factor's l is alive, it can hold the peak).
// A lower factor l is built in the result's buffer (the final select
// writes over it in place); an upper one is transposed into the result at
// the end, so l is a temporary beside it after the first loop. Unless the
// matrix is a parameter: XLA then transposes only the slices it reads;
// any other matrix it transposes whole (a value that dies within the
// expansion, which takes the result's buffer), where the model counts the
// operand instead.
int64_t CholeskyScratchBytes(const HloInstruction& cholesky);

// The part of CholeskyEarlyBytes that CholeskyScratchBytes also counts (an
// expansion XLA leaves a call computes its early values when called): all
// of it when blocked, none with n <= 128.
int64_t CholeskyEarlyBytesInScratch(const HloInstruction& cholesky);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_CHOLESKY_H_
