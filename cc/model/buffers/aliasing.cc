#include "model/buffers/aliasing.h"

#include <unordered_set>

#include "analysis/loop_state.h"
#include "analysis/shape_leaves.h"
#include "ir/computation.h"
#include "model/simplify/loop_simplifier.h"

namespace exla {
namespace {

class Aliasing {
 public:
  Aliasing(const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves, LoopStateBuffers* state)
      : schedule_(schedule), fusion_(fusion), leaves_(leaves), state_(state) {}

  void AliasViewsAndControlFlow();

 private:
  void AliasWhile(const HloInstruction& loop);
  void AliasCalls(const HloInstruction& instruction);
  int OwnReaders(const HloInstruction& value);
  const HloInstruction* WrittenInPlace(const HloInstruction& element);

  const ModuleSchedule& schedule_;
  FusedModule* fusion_;
  LeafBuffers* leaves_;
  LoopStateBuffers* state_;
};

void Aliasing::AliasViewsAndControlFlow() {
  for (const HloComputation* computation : schedule_.computations) {
    for (const auto& owned : computation->instructions()) {
      const HloInstruction* instruction = owned.get();
      if (!schedule_.start.count(instruction)) continue;
      switch (instruction->opcode()) {
        case HloOpcode::kTuple: {
          int64_t first = 0;
          for (const HloInstruction* operand : instruction->operands()) {
            leaves_->UnionRange(instruction, first, operand);
            first += LeafCount(operand->shape());
          }
          break;
        }
        case HloOpcode::kGetTupleElement: {
          const HloInstruction* tuple = instruction->operand(0);
          const int64_t index = instruction->IntAttribute("index").value_or(0);
          int64_t first = 0;
          for (int64_t i = 0; i < index && i < static_cast<int64_t>(tuple->shape().tuple_shapes().size()); ++i) {
            first += LeafCount(tuple->shape().tuple_shape(i));
          }
          leaves_->UnionRange(tuple, first, instruction);
          break;
        }
        case HloOpcode::kWhile:
          AliasWhile(*instruction);
          break;
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
          AliasCalls(*instruction);
          break;
        default:
          if (fusion_->HoldingOf(instruction) == Holding::kOperand && instruction->operand_count() > 0 &&
              LeafCount(instruction->shape()) == LeafCount(instruction->operand(0)->shape())) {
            leaves_->UnionRange(instruction, 0, instruction->operand(0));
          }
          break;
      }
    }
  }
}

// A while loop's state is one set of buffers, shared by its result, the
// parameters of its body and condition and the body's result. Its initial
// value is written into it in place when the loop is its last reader or
// the body only reads it; otherwise XLA copies it in first.
void Aliasing::AliasWhile(const HloInstruction& loop) {
  const HloComputation* body = loop.CalledComputation("body");
  const HloComputation* condition = loop.CalledComputation("condition");
  if (body == nullptr || condition == nullptr) return;
  leaves_->UnionRange(&loop, 0, body->parameter(0));
  leaves_->UnionRange(&loop, 0, condition->parameter(0));
  // The body's result is the state, but for an element the body returns
  // from another's place: XLA copies it there (copy insertion).
  const std::vector<int64_t> returned = ReturnedParameterLeaves(*body);
  const std::vector<int>& result = leaves_->LeavesOf(body->root());
  const std::vector<int>& leaves = leaves_->LeavesOf(&loop);
  for (size_t k = 0; k < leaves.size() && k < result.size(); ++k) {
    if (k < returned.size() && returned[k] >= 0 && returned[k] != static_cast<int64_t>(k)) {
      // The copy is made when the body ends, beside the others.
      const int64_t end = schedule_.Start(body->root());
      state_->rotated_copies.push_back({leaves_->leaf(result[k]).bytes, end, end});
      continue;
    }
    leaves_->Union(leaves[k], result[k]);
  }
  if (state_->bodies.insert(body).second) state_->body_order.push_back(body);
  const HloInstruction* init = loop.operand(0);
  const std::vector<int>& state = leaves_->LeavesOf(&loop);
  const std::vector<int>& initial = leaves_->LeavesOf(init);
  const std::vector<const HloInstruction*> sources = InitialLeaves(*init);
  // A value that initialises several elements of the state is written in
  // place into one of them only; XLA copies it into the others.
  std::unordered_set<const HloInstruction*> taken;
  const std::vector<bool> passes = PassThroughLeaves(*body);
  // XLA's simplifier drops an element that repeats another: one buffer.
  const std::vector<int> repeats = RepeatedLoopElements(loop);
  for (size_t k = 0; k < state.size() && k < initial.size(); ++k) {
    if (k < repeats.size() && repeats[k] >= 0) {
      leaves_->Union(state[k], state[repeats[k]]);
      continue;
    }
    bool in_place = k < passes.size() && passes[k];
    const HloInstruction* element = k < sources.size() ? sources[k] : nullptr;
    if (!in_place && element != nullptr) {
      const HloInstruction* value = WrittenInPlace(*element);
      in_place = value != nullptr && taken.insert(value).second;
    }
    if (in_place) {
      leaves_->Union(state[k], initial[k]);
      continue;
    }
    // XLA's copy insertion copies the initial value into the state
    // buffer. The copy reads only that value, so the breadth-first
    // scheduler runs it as soon as the value exists (at the start of the
    // computation, for a literal or a parameter), not when the loop
    // starts: the state buffer is alive from then on.
    state_->copied_from[state[k]] = schedule_.Start(element != nullptr ? element : init);
  }
}

// The readers of `value` that read its buffer: XLA's fusion gives each
// reader that can compute a cheap producer a copy of it
// (reader_duplication.h), so a broadcast that starts a loop's state and is
// read again after the loop is the state's buffer, written in place, and
// no copy of it is made.
int Aliasing::OwnReaders(const HloInstruction& value) {
  int readers = 0;
  for (const HloInstruction* user : value.users()) readers += fusion_->ReadsThrough(&value, user) ? 0 : 1;
  return readers;
}

// The value whose buffer `element`, an initial value of a loop's state,
// is, when the loop may take that buffer: a value with a buffer of its
// own that only the loop reads, directly or through views of it (a
// reshape is a bitcast after layout assignment, and a bitcast defines no
// value in XLA's dataflow, so copy insertion sees the loop as the value's
// only reader). Null when XLA copies the value in first.
const HloInstruction* Aliasing::WrittenInPlace(const HloInstruction& element) {
  const HloInstruction* value = fusion_->StripViews(element);
  for (const HloInstruction* view = &element; view != value; view = view->operand(0)) {
    if (OwnReaders(*view) != 1) return nullptr;
  }
  if (fusion_->HoldingOf(value) != Holding::kOwn || OwnReaders(*value) != 1) return nullptr;
  return value;
}

// A called computation reads its operands where they are and writes its
// result where the caller's result is.
void Aliasing::AliasCalls(const HloInstruction& instruction) {
  for (const HloComputation* callee : instruction.called_computations()) {
    if (callee == nullptr) continue;
    leaves_->UnionRange(&instruction, 0, callee->root());
    const std::vector<HloInstruction*> parameters = callee->parameters();
    // A conditional's operand 0 is the branch index.
    const int offset = instruction.Is(HloOpcode::kConditional) ? 1 : 0;
    for (size_t p = 0; p < parameters.size(); ++p) {
      const int index = static_cast<int>(p) + offset;
      if (index < instruction.operand_count() && instruction.Is(HloOpcode::kCall)) {
        leaves_->UnionRange(parameters[p], 0, instruction.operand(index));
      } else if (index < instruction.operand_count() && parameters.size() == 1) {
        leaves_->UnionRange(parameters[p], 0, instruction.operand(index));
      }
    }
  }
}

}  // namespace

LoopStateBuffers AliasBuffers(const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves) {
  LoopStateBuffers state;
  Aliasing(schedule, fusion, leaves, &state).AliasViewsAndControlFlow();
  return state;
}

}  // namespace exla
