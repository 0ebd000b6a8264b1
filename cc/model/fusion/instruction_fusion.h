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
#ifndef EXLA_MODEL_FUSION_INSTRUCTION_FUSION_H_
#define EXLA_MODEL_FUSION_INSTRUCTION_FUSION_H_

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

// A dot that contracts nothing but dimensions of size 1 is an outer product:
// XLA's simplifier drops the degenerate dimensions and rewrites it as a
// multiply of two broadcasts, an elementwise loop that fusion treats as such.
bool IsOuterProduct(const HloInstruction& instruction);

// Whether XLA CPU emits the dot `instruction` as a loop of its own, into
// which it fuses the producers of its matrix: a matrix-vector product with
// a small vector.
bool IsFusedMatrixVectorDot(const HloInstruction& instruction);

// Whether `instruction` reads its operands inside a fused loop, so that a
// fusible producer can be folded into it.
bool FusesProducers(const HloInstruction& instruction);

bool FusesOperand(const HloInstruction& consumer, int operand_index);

// Whether duplicating `instruction` into several consumers costs enough that
// XLA writes it once instead: the expensive elementwise operations
// (analysis/flops.h's IsExpensiveElementwise) and reductions.
bool IsExpensive(const HloInstruction& instruction);

// How XLA CPU holds the value `instruction` defines, judged from its
// opcode and its users.
Holding HoldingOf(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_INSTRUCTION_FUSION_H_
