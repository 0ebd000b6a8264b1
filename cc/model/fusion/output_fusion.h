// Matrix-vector products XLA CPU fuses into the add that reads them.
//
// CpuInstructionFusion makes a dot whose result has at most one dimension
// (once XLA has dropped those of extent 1), with no batch dimensions, an
// output fusion of the add that is its only reader (CanBeOutputFused), run
// where the add runs. The add takes its operands latest in post order
// first (InstructionFusion's operand order): the dot joins it only if no
// operand before it was fused into the add as a loop, and only if the add
// reads the dot itself, not a reshape of it (where XLA drops the dot's
// dimensions of extent 1, a reshape stays between them unless every
// operand of the add is such a reshape). Nothing is fused into an output
// fusion after that (it is not a loop fusion): the dot reads its matrix
// and its vector, and the add its other operand, from buffers, where a dot
// left alone would take the producers of its matrix into a loop of its
// own (instruction_fusion.h, IsFusedMatrixVectorDot).
#ifndef EXLA_MODEL_FUSION_OUTPUT_FUSION_H_
#define EXLA_MODEL_FUSION_OUTPUT_FUSION_H_

#include "ir/instruction.h"

namespace exla {

// Whether XLA CPU fuses the dot `dot` into the add that reads it.
bool IsOutputFusedIntoAdd(const HloInstruction& dot);

// Whether `add` is an add into which XLA CPU fuses a dot it reads.
bool TakesOutputFusedDot(const HloInstruction& add);

// Whether operand `operand_index` of `add` is (a view of) the dot XLA CPU
// fuses into it.
bool IsOutputFusedOperand(const HloInstruction& add, int operand_index);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_OUTPUT_FUSION_H_
