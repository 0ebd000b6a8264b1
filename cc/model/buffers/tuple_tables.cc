#include "model/buffers/tuple_tables.h"

#include <algorithm>

#include "model/simplify/loop_simplifier.h"

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

void AddTupleTable(const BufferAnalyses& a, const HloInstruction& instruction, int64_t step,
                   std::vector<HeapBuffer>* lives) {
  if (!instruction.shape().IsTuple() || &instruction == a.module.entry()->root()) return;
  const Holding h = a.fusion.HoldingOf(&instruction);
  if (h == Holding::kParameter || instruction.Is(HloOpcode::kGetTupleElement) || instruction.Is(HloOpcode::kCall) ||
      !HasTable(instruction, a.loop_state.bodies)) {
    return;
  }
  const bool loop = instruction.Is(HloOpcode::kWhile);
  int64_t end = loop ? a.schedule.End(&instruction) : step;
  int64_t start = step;
  if (loop && instruction.operand(0)->Is(HloOpcode::kTuple)) {
    start = std::min(start, a.schedule.Start(instruction.operand(0)));
  }
  for (int leaf : a.leaves.LeavesOf(&instruction)) end = std::max(end, a.last_use[leaf]);
  const int64_t removed = loop ? RemovedLoopElements(instruction) : 0;
  lives->push_back({{TupleTableBytes(instruction.shape()) - removed * kPointerBytes, start, end},
                    HeapBuffer::Kind::kTupleTable, {&instruction}, {&instruction.shape()}, {step}});
}

void AddConditionalTables(const BufferAnalyses& a, const HloInstruction& conditional, int64_t step,
                          std::vector<HeapBuffer>* lives) {
  using Kind = HeapBuffer::Kind;
  if (conditional.shape().IsArray()) {
    int64_t end = a.schedule.End(&conditional);
    for (int leaf : a.leaves.LeavesOf(&conditional)) end = std::max(end, a.last_use[leaf]);
    lives->push_back({{kPointerBytes, step, end}, Kind::kTupleTable, {&conditional}, {&conditional.shape()}, {step}});
  }
  std::unordered_set<const HloInstruction*> seen;
  for (int i = 1; i < conditional.operand_count(); ++i) {
    const HloInstruction* operand = conditional.operand(i);
    if (!operand->shape().IsArray() || !seen.insert(operand).second) continue;
    lives->push_back({{kPointerBytes, a.schedule.Start(operand), step}, Kind::kTupleTable, {&conditional},
                      {&operand->shape()}, {step}});
  }
}

}  // namespace exla
