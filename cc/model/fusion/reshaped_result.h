// A loop whose only reader is a reshape writes the reshape's shape.
//
// Once XLA CPU has assigned layouts, a reshape that keeps the elements in
// order is a bitcast, which instruction fusion takes into the loop of the
// value it reshapes (CanBeLoopFused): the loop's result has the reshape's
// shape. XLA lets a loop write over an operand only when the two have the
// same shape and layout (HloDataflowAnalysis::CanShareOperandBufferWithUser),
// so such a loop never writes over the operands it reads, even when they
// have as many bytes as its result.
#ifndef EXLA_MODEL_FUSION_RESHAPED_RESULT_H_
#define EXLA_MODEL_FUSION_RESHAPED_RESULT_H_

#include "ir/instruction.h"

namespace exla {

// Whether XLA writes the value of `producer` (a buffer of its own) in the
// shape of a reshape that is its only reader, not in its own.
bool WrittenReshaped(const HloInstruction& producer);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_RESHAPED_RESULT_H_
