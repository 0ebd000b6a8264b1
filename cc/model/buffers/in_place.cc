#include "model/buffers/in_place.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "ir/computation.h"
#include "model/buffers/output_aliasing.h"
#include "model/expand/expansions.h"
#include "model/fusion/dot_operand_copies.h"
#include "model/fusion/instruction_fusion.h"
#include "model/fusion/parallel_tasks.h"
#include "model/fusion/reshaped_result.h"
#include "model/simplify/xla_topk.h"

namespace exla {

void InPlaceSharing::Run() {
  IndexGroups();
  for (const auto& [step, instruction] : schedule_.ByStep()) {
    if (instruction->Is(HloOpcode::kSort) && fusion_->HoldingOf(instruction) == Holding::kOwn) {
      ShareSortedOperands(*instruction, step);
      continue;
    }
    if (WriteOverDyingOperand(*instruction, step)) written_in_place_.insert(instruction);
  }
  ChainOutlinedLoopsIntoResult();
}

bool InPlaceSharing::WriteOverDyingOperand(const HloInstruction& instruction, int64_t step) {
  if (fusion_->HoldingOf(&instruction) != Holding::kOwn || !instruction.shape().IsArray()) return false;
  std::vector<std::pair<const HloInstruction*, bool>> candidates;
  const int mine = leaves_->LeavesOf(&instruction)[0];
  if (instruction.Is(HloOpcode::kDynamicUpdateSlice) || instruction.Is(HloOpcode::kScatter)) {
    if (!fusion_->FoldedAway(instruction.operand(0))) candidates.push_back({instruction.operand(0), true});
  } else if (IsLoopFusible(instruction) && MayWriteOverOperands(instruction, mine, step) &&
             !WrittenTransposed(instruction) && !WrittenReshaped(instruction)) {
    fusion_->Inputs(&instruction, instruction.IsElementwise(), &candidates);
  }
  // XLA writes a loop over an operand only when every read of it in the
  // loop is elementwise (HloDataflowAnalysis::CanShareOperandBufferWithUser
  // on a loop fusion): a value read also through a transpose or a
  // concatenation would be overwritten before its last read. A reshape
  // that is a view reads the same buffer, so it counts as a read of the
  // value under it (a bitcast in XLA's fused computation, not elementwise).
  std::unordered_set<const HloInstruction*> moved;
  for (const auto& [operand, elementwise] : candidates) {
    if (!elementwise) moved.insert(fusion_->StripViews(*operand));
  }
  for (const auto& [operand, elementwise] : candidates) {
    const HloInstruction* under = fusion_->StripViews(*operand);
    if (!elementwise || moved.count(under) || !operand->shape().IsArray() || InParallelCall(*operand)) continue;
    const int theirs = leaves_->LeavesOf(operand)[0];
    const bool into_result = group_result_[leaves_->Find(mine)];
    // An outlined loop's value is defined inside its call, and XLA's heap
    // simulator lets a value take an operand's buffer only where it reads
    // the instruction that defines it. The result's allocation takes it, but
    // only from a writer outlined as well (a call that reads the call): a
    // result loop too small to be outlined writes a buffer of its own.
    const bool outlined_writer = into_result && fusion_->Outlined(instruction);
    if (fusion_->Outlined(*under) && !outlined_writer) continue;
    if (leaves_->leaf(theirs).bytes != leaves_->leaf(mine).bytes || !Dies(theirs, step, into_result)) continue;
    if (group_state_[leaves_->Find(theirs)] && !ReadsLoopResult(*operand)) continue;
    Merge(mine, theirs);
    return true;
  }
  return false;
}

bool InPlaceSharing::ReadsLoopResult(const HloInstruction& operand) {
  const HloInstruction* at = fusion_->StripViews(operand);
  while (at->Is(HloOpcode::kGetTupleElement)) {
    at = at->operand(0);
    if (at->Is(HloOpcode::kWhile)) return true;
  }
  return false;
}

void InPlaceSharing::ChainOutlinedLoopsIntoResult() {
  const std::vector<std::pair<int64_t, const HloInstruction*>> by_step = schedule_.ByStep();
  for (auto it = by_step.rbegin(); it != by_step.rend(); ++it) {
    const HloInstruction& instruction = *it->second;
    if (fusion_->HoldingOf(&instruction) != Holding::kOwn || !instruction.shape().IsArray() ||
        !fusion_->Outlined(instruction)) {
      continue;
    }
    // Only a loop the first pass refused (it writes over one operand at
    // most) that has joined the result's allocation since.
    if (written_in_place_.count(&instruction) != 0) continue;
    if (!group_result_[leaves_->Find(leaves_->LeavesOf(&instruction)[0])]) continue;
    WriteOverDyingOperand(instruction, it->first);
  }
}

bool InPlaceSharing::SortableInPlace(const HloInstruction& operand) {
  return operand.user_count() == 1 && operand.shape().IsArray() && !fusion_->FoldedAway(&operand) &&
         !InParallelCall(operand) && !fusion_->Outlined(operand);
}

void InPlaceSharing::ShareSortedOperands(const HloInstruction& sort, int64_t step) {
  // XLA CPU runs a top-k as a library call that writes buffers of its own.
  if (XlaRunsAsTopK(sort)) return;
  const std::vector<int>& mine = leaves_->LeavesOf(&sort);
  for (int i = 0; i < sort.operand_count() && i < static_cast<int>(mine.size()); ++i) {
    const HloInstruction* operand = sort.operand(i);
    if (!SortableInPlace(*operand)) continue;
    // XLA gives a sorted array that is a result of the entry its own
    // allocation, which no operand shares.
    if (group_result_[leaves_->Find(mine[i])]) continue;
    const int theirs = leaves_->LeavesOf(operand)[0];
    if (leaves_->leaf(theirs).bytes != leaves_->leaf(mine[i]).bytes || !Dies(theirs, step, false)) continue;
    Merge(mine[i], theirs);
  }
}

// XLA decomposes a top-k it has no kernel for (not f32) into a sort of
// its operand and an iota of indices, which sorts the operand in place
// when nothing else reads it and it dies there (as ShareSortedOperands):
// the operand's bytes of the expansion's scratch are then its own buffer.
int64_t InPlaceSharing::TopKSortedInPlaceBytes(const HloInstruction& topk, int64_t step) {
  if (!topk.Is(HloOpcode::kTopK) || topk.operand_count() != 1 || ScratchBytes(topk) == 0) return 0;
  const HloInstruction* operand = topk.operand(0);
  if (!SortableInPlace(*operand)) return 0;
  return Dies(leaves_->LeavesOf(operand)[0], step, false) ? operand->shape().ByteSize() : 0;
}

bool InPlaceSharing::MayWriteOverOperands(const HloInstruction& instruction, int mine, int64_t step) {
  const int root = leaves_->Find(mine);
  if (group_loop_start_[root] < step) return false;
  return group_pinned_[root] || !fusion_->Outlined(instruction);
}

void InPlaceSharing::IndexGroups() {
  group_last_.assign(leaves_->size(), -1);
  group_pinned_.assign(leaves_->size(), false);
  group_loop_start_.assign(leaves_->size(), schedule_.last_step() + 1);
  group_loop_end_.assign(leaves_->size(), -1);
  group_state_.assign(leaves_->size(), false);
  group_result_.assign(leaves_->size(), false);
  const HloInstruction* result = module_.entry()->root();
  const std::vector<const Shape*> aliased = AliasedOutputs(module_);
  for (int i = 0; i < static_cast<int>(leaves_->size()); ++i) {
    const Leaf& leaf = leaves_->leaf(i);
    const int root = leaves_->Find(i);
    group_last_[root] = std::max(group_last_[root], last_use_[i]);
    if (leaf.instruction->Is(HloOpcode::kWhile)) {
      group_loop_start_[root] = std::min(group_loop_start_[root], schedule_.Start(leaf.instruction));
      group_loop_end_[root] = std::max(group_loop_end_[root], schedule_.End(leaf.instruction));
    }
    // The parameter of a loop body or condition is the loop's state: it
    // may not be written over while the loop runs, but once the loop has
    // returned it is a temporary like any other.
    const Holding h = fusion_->HoldingOf(leaf.instruction);
    const bool argument = h == Holding::kParameter && leaf.instruction->parent() == module_.entry();
    if (argument || h == Holding::kConstant || leaf.instruction == result) {
      group_pinned_[root] = true;
    } else if (h == Holding::kParameter) {
      group_state_[root] = true;
    }
    // The entry's result, unless the header puts it in a parameter's
    // buffer (alive from the start, so no loop's state can become it).
    if (leaf.instruction == result &&
        std::find(aliased.begin(), aliased.end(), leaf.shape) == aliased.end()) {
      group_result_[root] = true;
    }
  }
}

void InPlaceSharing::Merge(int a, int b) {
  const int ra = leaves_->Find(a), rb = leaves_->Find(b);
  if (ra == rb) return;
  leaves_->Link(ra, rb);
  group_last_[rb] = std::max(group_last_[rb], group_last_[ra]);
  group_pinned_[rb] = group_pinned_[rb] || group_pinned_[ra];
  group_loop_start_[rb] = std::min(group_loop_start_[rb], group_loop_start_[ra]);
  group_loop_end_[rb] = std::max(group_loop_end_[rb], group_loop_end_[ra]);
  group_state_[rb] = group_state_[rb] || group_state_[ra];
  group_result_[rb] = group_result_[rb] || group_result_[ra];
}

bool InPlaceSharing::Dies(int leaf, int64_t step, bool into_result) {
  const int root = leaves_->Find(leaf);
  if (group_state_[root] && !(into_result && group_loop_end_[root] >= 0 && step > group_loop_end_[root])) {
    return false;
  }
  return !group_pinned_[root] && group_last_[root] == step;
}

}  // namespace exla
