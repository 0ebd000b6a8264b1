#include "model/expand/loop_state_layout.h"

#include <vector>

namespace exla {
namespace {

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
         value->shape().IsArray() && !InRowMajorOrder(value->dimensions(), value->operand(0)->shape());
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
