#include "model/buffers/tuple_tables.h"

namespace exla {
namespace {

// Whether `tuple` is made of the elements, in order, of one other tuple of
// the same arity.
bool RebuildsATuple(const HloInstruction& tuple) {
  const HloInstruction* source = nullptr;
  for (int i = 0; i < tuple.operand_count(); ++i) {
    const HloInstruction* element = tuple.operand(i);
    if (!element->Is(HloOpcode::kGetTupleElement) || element->IntAttribute("index").value_or(-1) != i) {
      return false;
    }
    if (source != nullptr && source != element->operand(0)) return false;
    source = element->operand(0);
  }
  return source != nullptr && source->shape().IsTuple() &&
         source->shape().tuple_shapes().size() == tuple.shape().tuple_shapes().size();
}

}  // namespace

int64_t TupleTableBytes(const Shape& shape) {
  if (!shape.IsTuple()) return 0;
  int64_t bytes = kPointerBytes * static_cast<int64_t>(shape.tuple_shapes().size());
  for (const Shape& element : shape.tuple_shapes()) bytes += TupleTableBytes(element);
  return bytes;
}

bool HasTable(const HloInstruction& instruction, const std::unordered_set<const HloComputation*>& loop_bodies) {
  if (!instruction.Is(HloOpcode::kTuple)) return true;
  bool only_read = !instruction.users().empty();
  for (const HloInstruction* user : instruction.users()) {
    only_read = only_read && user->Is(HloOpcode::kGetTupleElement);
    // A loop's initial tuple: its table is the loop's.
    if (user->Is(HloOpcode::kWhile) && instruction.user_count() == 1) return false;
  }
  if (only_read) return false;
  const HloComputation* parent = instruction.parent();
  if (parent->root() == &instruction && loop_bodies.count(parent)) return false;
  return !RebuildsATuple(instruction);
}

}  // namespace exla
