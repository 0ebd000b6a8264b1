// Concatenations XLA CPU keeps out of fused loops.
//
// CpuInstructionFusion neither fuses a concatenate into its readers nor
// its operands into it when it joins more than 8 operands, or joins arrays
// of rank 2 or more along their minor dimension where the result is at
// least 128 elements long: a loop over it would branch in its innermost
// dimension, where a plain copy loop is faster. The concatenate is then a
// loop of its own, whose result and operands are buffers.
#ifndef EXLA_MODEL_FUSION_CONCATENATE_FUSION_H_
#define EXLA_MODEL_FUSION_CONCATENATE_FUSION_H_

#include "ir/instruction.h"

namespace exla {

// Whether `instruction` is a concatenate that XLA CPU runs unfused.
bool IsUnfusedConcatenate(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_CONCATENATE_FUSION_H_
