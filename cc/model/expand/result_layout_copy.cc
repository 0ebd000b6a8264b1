#include "model/expand/result_layout_copy.h"

#include <functional>

#include "ir/computation.h"

namespace exla {
namespace {

bool IsUnaryElementwise(const HloInstruction& instruction) {
  return instruction.operand_count() == 1 && instruction.IsElementwise() &&
         !instruction.Is(HloOpcode::kConvert) && !instruction.Is(HloOpcode::kCopy);
}

// Whether `element` is computed in a transposed layout: a real transpose
// (one that moves elements in row-major order) of a value its loop computes
// (not one `in_buffer` holds, of which it is a bitcast), or unary
// elementwise ops (each read by one instruction) over a real transpose of
// anything.
bool ComputedTransposed(const HloInstruction& element, const std::function<bool(const HloInstruction&)>& in_buffer) {
  const HloInstruction* value = &element;
  while (IsUnaryElementwise(*value) && value->operand(0)->users().size() == 1) value = value->operand(0);
  if (!value->Is(HloOpcode::kTranspose) || value->operand_count() != 1 || !value->shape().IsArray() ||
      InRowMajorOrder(value->dimensions(), value->operand(0)->shape())) {
    return false;
  }
  const HloInstruction& source = *value->operand(0);
  return value != &element || !in_buffer(source);
}

}  // namespace

int64_t ResultLayoutCopyBytes(const HloInstruction& value,
                              const std::function<bool(const HloInstruction&)>& in_buffer) {
  const HloComputation* computation = value.parent();
  if (computation == nullptr || !computation->is_entry() || !value.shape().IsArray()) return 0;
  const HloInstruction* root = computation->root();
  if (root == &value || !root->Is(HloOpcode::kTuple)) return 0;
  // XLA's simplifier removes a reshape to the shape its operand has, so the
  // tuple may hold the value through one. An element the tuple holds twice
  // is copied by copy insertion too; the temporary then dies before that
  // second copy's result is written, in whose allocation XLA places it: no
  // memory of its own.
  int times = 0;
  for (const HloInstruction* element : root->operands()) {
    while (element != &value && element->Is(HloOpcode::kReshape) && element->shape().IsArray() &&
           element->operand(0)->shape().IsArray() && element->shape().dims() == element->operand(0)->shape().dims()) {
      element = element->operand(0);
    }
    times += element == &value ? 1 : 0;
  }
  if (times != 1 || !ComputedTransposed(value, in_buffer)) return 0;
  return value.shape().ByteSize();
}

}  // namespace exla
