#include "model/expand/loop_state_layout.h"

#include <vector>

namespace exla {
namespace {

// Whether a transpose moves elements in memory when its operand and result
// are both row-major: the dimensions of more than one element change order.
bool MovesElements(const HloInstruction& transpose) {
  const Shape& operand = transpose.operand(0)->shape();
  int64_t last = -1;
  for (int64_t dimension : transpose.dimensions()) {
    if (operand.dim(static_cast<int>(dimension)) == 1) continue;
    if (dimension < last) return true;
    last = dimension;
  }
  return false;
}

bool IsUnaryElementwise(const HloInstruction& instruction) {
  return instruction.operand_count() == 1 && instruction.IsElementwise() &&
         !instruction.Is(HloOpcode::kConvert) && !instruction.Is(HloOpcode::kCopy);
}

// Whether XLA lays `element` out as a bitcast of a real transpose: unary
// elementwise ops (each read by one instruction) over a transpose, whose
// only reader is the loop's initial state. The model already gives a bare
// transpose a buffer of its own, which stands for XLA's copy of it (a
// transpose of a parameter is a bitcast of it, copied into the loop's
// layout): only below elementwise ops does XLA write two buffers.
bool LaidOutTransposed(const HloInstruction& element) {
  const HloInstruction* value = &element;
  while (IsUnaryElementwise(*value) && value->operand(0)->users().size() == 1) value = value->operand(0);
  return value != &element && value->Is(HloOpcode::kTranspose) && value->operand_count() == 1 &&
         value->shape().IsArray() && MovesElements(*value);
}

}  // namespace

int64_t LoopStateLayoutCopyBytes(const HloInstruction& loop) {
  if (!loop.Is(HloOpcode::kWhile) || loop.operand_count() != 1) return 0;
  const HloInstruction& state = *loop.operand(0);
  if (!state.Is(HloOpcode::kTuple) || state.users().size() != 1) return 0;
  int64_t bytes = 0;
  for (const HloInstruction* element : state.operands()) {
    if (element->users().size() == 1 && element->shape().IsArray() && LaidOutTransposed(*element)) {
      bytes += element->shape().ByteSize();
    }
  }
  return bytes;
}

}  // namespace exla
