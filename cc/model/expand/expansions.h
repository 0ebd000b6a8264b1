// What XLA's expanders make of one instruction, in memory.
//
// XLA CPU has no kernel for some instructions and expands each into several
// before fusion: Cholesky factorisations, triangular solves and
// TensorFlow's QR custom calls into while loops over blocks or columns, a
// top-k other than f32 into a sort, a select-and-scatter into iotas, a
// variadic reduce-window and a scatter, a convolution over batch groups
// into a dense convolution and a select, a long reduction into a tree
// (tree_reduction.h). The memory model does not rewrite them; it counts
// what the expansion holds: scratch while the instruction runs, the table
// and small values of the loop it runs, and what the expansion computes
// from no operand, which XLA's schedule runs first.
#ifndef EXLA_MODEL_EXPAND_EXPANSIONS_H_
#define EXLA_MODEL_EXPAND_EXPANSIONS_H_

#include <cstdint>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// Scratch memory XLA's expansion of `instruction` holds while it runs (the
// transposed copy of a convolution's result whose dimensions come in
// another order than XLA CPU's convolutions write (convolution_layout.h); a
// tree reduction's partial sums (tree_reduction.h); a top-k other than f32 becomes a sort of
// its whole operand and indices; a select-and-scatter becomes iotas, a
// variadic reduce-window and a scatter; Cholesky and triangular solves
// become loops over copies of the matrices).
int64_t ScratchBytes(const HloInstruction& instruction);

// The elements of the state of the while loop XLA's expansion of
// `instruction` runs, or 0 when it runs none: a Cholesky factorisation
// loops over columns with (counter, matrix, result, two masks), a
// triangular solve inverts its diagonal blocks in a loop over (counter,
// blocks, inverse), and the QR custom calls TensorFlow emits (Qr and
// ProductOfElementaryHouseholderReflectors) loop over Householder
// reflections with (counter, matrix, taus or result). Like any loop, it
// holds a pointer table of its state, a counter and its condition.
int64_t ExpansionLoopStateElements(const HloInstruction& instruction);

// Bytes XLA's expansion of `instruction` computes from no operand: the
// masks and zero factors of a Cholesky factorisation's loops and the
// accumulators of its solves (cholesky.h), the zero-filled blocks a
// triangular solve accumulates the inverses of its diagonal blocks into.
// Ready before anything else, they run first in XLA's breadth-first
// schedule and stay alive until the expansion has run.
int64_t ExpansionEarlyBytes(const HloInstruction& instruction);

// The part of ExpansionEarlyBytes that ScratchBytes counts as well: an
// expansion XLA leaves a call computes them when called, so its scratch
// holds them; an inlined one computes them first, and they are taken out
// of its scratch (buffers/scratch.cc).
int64_t ExpansionEarlyBytesInScratch(const HloInstruction& instruction);

// Small values XLA's expansion of `instruction` writes each to a buffer of
// its own while it runs: a loop's counter and condition (see above), for
// a Cholesky factorisation the flag of its loop's state, for the QR custom
// calls the scalars and vectors each step of their loops writes; the
// two 32-bit key words a Philox rng-bit-generator derives from its state,
// which every round of every element of its output reads (too often for
// XLA to fold them into the output's loop, fusion_duplication.h).
std::vector<int64_t> ExpansionSmallValues(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_EXPANSIONS_H_
