#include "model/buffers/copies.h"

#include <algorithm>
#include <unordered_set>

#include "analysis/shape_leaves.h"
#include "ir/computation.h"
#include "model/fusion/dot_operand_copies.h"

namespace exla {
namespace {

// The last step at which an instruction that depends on `writer` reads
// element `k` of the loop body's `state` (whatever the schedule, it runs
// after the new value is written), or -1 when none does.
int64_t LastReadAfter(const BufferAnalyses& a, const HloInstruction& writer, const HloInstruction& state, int k) {
  std::unordered_set<const HloInstruction*> after;
  std::vector<const HloInstruction*> pending = {&writer};
  while (!pending.empty()) {
    const HloInstruction* at = pending.back();
    pending.pop_back();
    for (const HloInstruction* user : at->users()) {
      if (after.insert(user).second) pending.push_back(user);
    }
  }
  int64_t last = -1;
  for (const HloInstruction* reader : after) {
    if (!a.schedule.start.count(reader) || a.fusion.FoldedAway(reader) ||
        a.fusion.HoldingOf(reader) != Holding::kOwn) {
      continue;
    }
    std::vector<std::pair<const HloInstruction*, bool>> inputs;
    a.fusion.Inputs(reader, false, &inputs);
    for (const auto& input : inputs) {
      const HloInstruction* value = a.fusion.StripViews(*input.first);
      if (value->Is(HloOpcode::kGetTupleElement) && value->operand(0) == &state &&
          value->IntAttribute("index").value_or(-1) == k) {
        last = std::max(last, a.schedule.Start(reader));
      }
    }
  }
  return last;
}

// Whether the body writes element `k` of its `state` in place with
// `writer`, a value of its own (not a conditional, which copies already:
// AddConditionalOperandCopies).
bool WritesElementInPlace(const BufferAnalyses& a, const HloComputation& body, const HloInstruction& writer,
                          const HloInstruction& state, int k) {
  if (writer.parent() != &body || !a.schedule.start.count(&writer) || !writer.shape().IsArray() ||
      writer.Is(HloOpcode::kConditional) || a.fusion.HoldingOf(&writer) == Holding::kParameter) {
    return false;
  }
  return a.leaves.Find(a.leaves.LeavesOf(&writer)[0]) == a.leaves.Find(a.leaves.LeavesOf(&state)[k]);
}

}  // namespace

void AddConditionalOperandCopies(const BufferAnalyses& a, const HloInstruction& conditional, int64_t step,
                                 std::vector<HeapBuffer>* lives) {
  std::unordered_set<int> results;
  for (int leaf : a.leaves.LeavesOf(&conditional)) results.insert(a.leaves.Find(leaf));
  std::unordered_set<int> copied;
  for (int i = 1; i < conditional.operand_count(); ++i) {
    const HloInstruction* operand = conditional.operand(i);
    for (int leaf : a.leaves.LeavesOf(operand)) {
      const int root = a.leaves.Find(leaf);
      if (!results.count(root) || !copied.insert(root).second || a.leaves.leaf(leaf).bytes == 0) continue;
      lives->push_back({{a.leaves.leaf(leaf).bytes, a.schedule.Start(operand), step}, HeapBuffer::Kind::kScratch,
                        {&conditional}, {nullptr}, {step}});
    }
  }
}

void AddStateReadCopies(const BufferAnalyses& a, std::vector<HeapBuffer>* lives) {
  for (const HloComputation* body : a.loop_state.body_order) {
    const HloInstruction* root = body->root();
    const HloInstruction* state = body->parameter(0);
    if (!root->Is(HloOpcode::kTuple) || LeafCount(state->shape()) != root->operand_count()) continue;
    for (int k = 0; k < root->operand_count(); ++k) {
      const HloInstruction* writer = a.fusion.StripViews(*root->operand(k), /*through_elements=*/true);
      if (!WritesElementInPlace(a, *body, *writer, *state, k)) continue;
      const int64_t last = LastReadAfter(a, *writer, *state, k);
      if (last < 0) continue;
      // XLA's liveness ends the old value at the copy, and the element's
      // buffer is free until the new value is written: the copy costs
      // memory only while both values are alive.
      const int64_t first = a.schedule.Start(writer);
      lives->push_back({{a.leaves.leaf(a.leaves.LeavesOf(state)[k]).bytes, first, last}, HeapBuffer::Kind::kScratch,
                        {writer}, {nullptr}, {first}, /*one_value=*/true});
    }
  }
}

void AddRotatedCopies(const BufferAnalyses& a, std::vector<HeapBuffer>* lives) {
  for (const BufferLife& copy : a.loop_state.rotated_copies) {
    lives->push_back({copy, HeapBuffer::Kind::kScratch, {a.schedule.steps[copy.start]}, {nullptr}, {copy.start}});
  }
}

void DotOperandCopies::Add(const BufferAnalyses& a, const HloInstruction& dot, int64_t step,
                           std::vector<HeapBuffer>* lives) {
  for (int i = 0; i < 2 && i < dot.operand_count(); ++i) {
    if (!DotTransposesOperand(dot, i)) continue;
    const HloInstruction* buffer = DotOperandBuffer(dot, i);
    if (a.fusion.FoldedAway(buffer) || !a.schedule.start.count(buffer)) continue;
    const std::vector<int64_t> order = DotOperandOrder(dot, i);
    if (WrittenTransposed(*buffer)) {
      // The producer is itself the copy in the order its first such read needs.
      const auto reads = TransposedDotReads(*buffer);
      if (!reads.empty() && DotOperandOrder(*reads[0].first, reads[0].second) == order) continue;
    }
    const int64_t first = a.schedule.Start(buffer);
    // One copy per buffer and order: a later read extends the first copy.
    const auto key = std::make_pair(a.fusion.StripViews(*buffer), order);
    auto seen = copies_.find(key);
    if (seen != copies_.end()) {
      (*lives)[seen->second].life.end = std::max((*lives)[seen->second].life.end, step);
      continue;
    }
    copies_[key] = static_cast<int>(lives->size());
    lives->push_back({{buffer->shape().ByteSize(), first, step}, HeapBuffer::Kind::kScratch, {&dot}, {nullptr},
                      {first}, /*one_value=*/true});
  }
}

}  // namespace exla
