// What XLA CPU writes around a convolution before and after running it.
//
// XLA CPU's convolutions (Eigen's) read an input laid out batch, spatial,
// feature and a kernel laid out spatial, input, output feature, and write a
// result laid out like the input; XLA's layout assignment transposes
// whatever comes in another order into a copy. Its convolution
// canonicalisation expands a grouped kernel, and its simplifier swaps the
// operands of a convolution whose kernel covers more positions than its
// input has, reversing the kernel.
#ifndef EXLA_MODEL_EXPAND_CONVOLUTION_LAYOUT_H_
#define EXLA_MODEL_EXPAND_CONVOLUTION_LAYOUT_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// The convolution's `feature_group_count` or `batch_group_count` (1 when
// it has none).
int64_t ConvolutionGroupCount(const HloInstruction& convolution, const char* attribute);

// Bytes of a value XLA computes from the kernel (operand 1) of the
// convolution `instruction` alone before running it: a filter expanded over
// feature groups, or the kernel reversed when XLA swaps the operands. It can
// run as soon as the kernel exists, which a breadth-first schedule does.
int64_t PrologueBytes(const HloInstruction& instruction);

// Bytes of the transposed copy XLA's layout assignment makes of operand
// `operand` of the convolution `instruction`, or 0: an operand whose
// dimension labels come in another order (the filter gradient's f01b input
// and i01o kernel, the input gradient's 01oi kernel) is transposed into a
// copy, which XLA's scheduler may write as soon as the operand exists (the
// model does so for a parameter, whose copy then lives from the start).
int64_t LayoutCopyOfOperandBytes(const HloInstruction& instruction, int operand);

// Bytes of the transposed copy XLA writes of the result of the convolution
// `instruction` when the result's labels come in another order (the filter
// gradient's 01bf), before transposing it into place; or 0.
int64_t LayoutCopyOfResultBytes(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_CONVOLUTION_LAYOUT_H_
