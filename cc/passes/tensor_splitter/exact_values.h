// Values whose bits do not depend on how a loop slices them.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_EXACT_VALUES_H_
#define EXLA_PASSES_TENSOR_SPLITTER_EXACT_VALUES_H_

#include "ir/instruction.h"

namespace exla {

// Whether `producer` and everything it is computed from are data movement,
// comparisons, selections and operations whose result XLA rounds the same
// way in a slice as in the whole (an add or subtract could be contracted with
// a multiply operand into a fused multiply-add in one and not the other, so
// such operands are refused; exp, log and the like have vectorised and
// scalar versions that may differ in the last bit).
bool ComputedExactly(const HloInstruction* producer);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_EXACT_VALUES_H_
