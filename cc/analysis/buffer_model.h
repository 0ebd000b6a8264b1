// Which values of an unfused module XLA's CPU backend gives a buffer.
//
// exla sees a module before XLA's fusion; XLA's buffer assignment sees it
// after. On the CPU, instruction fusion folds cheap producers (elementwise
// arithmetic, broadcasts, slices, reshapes, transposes, iotas, reductions
// that feed elementwise work) into the loop of the consumer that reads them,
// so only the fusion's result is written to memory; a producer whose
// consumer cannot take it into its loop (a dot, a while, a custom call, the
// entry result) is written out. These rules reproduce those decisions well
// enough to predict the buffers; where unsure they choose a buffer (the
// prediction then errs high, never low).
#ifndef EXLA_ANALYSIS_BUFFER_MODEL_H_
#define EXLA_ANALYSIS_BUFFER_MODEL_H_

#include <cstdint>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// How XLA CPU holds the value one instruction defines.
enum class Holding {
  kFused,      // computed inside its users' loops: no buffer
  kOwn,        // written to a buffer of its own
  kOperand,    // the buffer of an operand (bitcast, reshape, tuple, copy...)
  kParameter,  // a parameter: the caller's buffer
  kConstant,   // a literal of the executable
};

// Whether XLA's instruction fusion may fold `instruction` into a consumer
// (a loop-fusible producer).
bool IsLoopFusible(const HloInstruction& instruction);

// Whether XLA CPU emits the dot `instruction` as a loop of its own, into
// which it fuses the producers of its matrix: a matrix-vector product with
// a small vector.
bool IsFusedMatrixVectorDot(const HloInstruction& instruction);

// Whether `instruction` reads its operands inside a fused loop, so that a
// fusible producer can be folded into it.
bool FusesProducers(const HloInstruction& instruction);

// Whether duplicating `instruction` into several consumers costs enough that
// XLA writes it once instead (transcendental functions, divisions).
bool IsExpensive(const HloInstruction& instruction);

// Whether XLA CPU rewrites the reduction `instruction` into a tree: a
// reduce-window over windows of 32 elements of each reduced dimension,
// which reads its input from memory, then a reduce of the partial sums.
// XLA does so when some reduced dimension is longer than 32; a reduction
// over shorter ones (all of a 32x16 block) stays one loop.
bool IsTreeReduction(const HloInstruction& instruction);

// Bytes of leaf `leaf` of what `instruction` defines as XLA CPU writes it
// (a top-k writes only its k leading elements; a bf16 dot and the bf16
// values it reads are written in f32).
int64_t LeafBytes(const HloInstruction& instruction, int64_t leaf, int64_t bytes);

// Bytes of a value XLA computes from the kernel (operand 1) of the
// convolution `instruction` alone before running it: a filter expanded over
// feature groups, or the kernel reversed when XLA swaps the operands. It can
// run as soon as the kernel exists, which a breadth-first schedule does.
int64_t PrologueBytes(const HloInstruction& instruction);

// Bytes of the transposed copy XLA's layout assignment makes of operand
// `operand` of the convolution `instruction`, or 0. XLA CPU's convolutions
// read an input laid out batch, spatial, feature and a kernel laid out
// spatial, input, output feature, and write a result laid out like the
// input: an operand whose dimension labels come in another order (the
// filter gradient's f01b input and i01o kernel, the input gradient's 01oi
// kernel) is transposed into a copy, which XLA's scheduler may write as
// soon as the operand exists (the model does so for a parameter, whose
// copy then lives from the start); a result in another order (the filter
// gradient's 01bf) is written to a copy and transposed after.
int64_t LayoutCopyOfOperandBytes(const HloInstruction& instruction, int operand);

// Scratch memory XLA's expansion of `instruction` holds while it runs (the
// transposed copy of a convolution's result whose dimensions come in
// another order than XLA CPU's convolutions write (see above); a
// tree reduction's partial sums; a top-k other than f32 becomes a sort of
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
// lower-triangle mask of a Cholesky factorisation's loop, the zero-filled
// blocks a triangular solve accumulates the inverses of its diagonal
// blocks into. Ready before anything else, they run first in XLA's
// breadth-first schedule and stay alive until the expansion has run.
int64_t ExpansionEarlyBytes(const HloInstruction& instruction);

// Small values XLA's expansion of `instruction` writes each to a buffer of
// its own while it runs: a loop's counter and condition (see above), for
// a Cholesky factorisation the flag of its loop's state, for the QR custom
// calls the scalars and vectors each step of their loops writes; the
// two 32-bit key words a Philox rng-bit-generator derives from its state,
// which every round of every element of its output reads (too often for
// XLA to fold them into the output's loop, fusion_duplication.h).
std::vector<int64_t> ExpansionSmallValues(const HloInstruction& instruction);

// How XLA CPU holds the value `instruction` defines, judged from its
// opcode and its users.
Holding HoldingOf(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_ANALYSIS_BUFFER_MODEL_H_
