#include "model/buffers/memory_model.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fusion/instruction_fusion.h"
#include "model/expand/convolution_layout.h"
#include "model/expand/expansions.h"
#include "model/expand/leaf_bytes.h"
#include "model/fusion/dot_operand_copies.h"
#include "model/simplify/expansion_calls.h"
#include "analysis/flops.h"
#include "model/fusion/fusion_duplication.h"
#include "model/simplify/loop_simplifier.h"
#include "model/simplify/simplification.h"
#include "analysis/loop_state.h"
#include "analysis/loop_trips.h"
#include "model/buffers/module_memory.h"
#include "model/buffers/output_aliasing.h"
#include "model/fusion/parallel_tasks.h"
#include "analysis/shape_leaves.h"
#include "model/buffers/schedule.h"
#include "model/simplify/xla_topk.h"
#include "ir/computation.h"
#include "ir/control_flow.h"
#include "ir/parser.h"

namespace exla {
namespace memory_internal {

ModuleBuffers ModuleMemory::Predict() {
  const HloComputation& entry = *module_.entry();
  schedule_.push_back(nullptr);  // step 0: nothing has run yet
  Walk(entry);
  AliasViewsAndControlFlow();
  RecordUses();
  ShareInPlace();
  ModuleBuffers buffers = Figures(entry);
  buffers.schedule = schedule_;
  return buffers;
}

const std::vector<int>& ModuleMemory::LeavesOf(const HloInstruction* instruction) {
  auto it = leaves_.find(instruction);
  if (it != leaves_.end()) return it->second;
  std::vector<int64_t> bytes;
  FlattenLeaves(instruction->shape(), &bytes);
  std::vector<const Shape*> shapes;
  FlattenLeafShapes(instruction->shape(), &shapes);
  std::vector<int>& ids = leaves_[instruction];
  for (size_t i = 0; i < bytes.size(); ++i) {
    ids.push_back(static_cast<int>(leaf_.size()));
    leaf_.push_back({instruction, shapes[i], LeafBytes(*instruction, static_cast<int64_t>(i), bytes[i])});
    parent_.push_back(static_cast<int>(parent_.size()));
  }
  return ids;
}

int ModuleMemory::Find(int leaf) {
  while (parent_[leaf] != leaf) leaf = parent_[leaf] = parent_[parent_[leaf]];
  return leaf;
}

// Leaves [first, first + count) of `instruction` alias all of `other`'s.
void ModuleMemory::UnionRange(const HloInstruction* instruction, int64_t first, const HloInstruction* other) {
  const std::vector<int>& mine = LeavesOf(instruction);
  const std::vector<int>& theirs = LeavesOf(other);
  for (size_t i = 0; i < theirs.size() && first + static_cast<int64_t>(i) < static_cast<int64_t>(mine.size()); ++i) {
    Union(mine[first + i], theirs[i]);
  }
}

// HoldingOf, less the producers XLA leaves out of loops that would
// compute them too often (fusion_duplication.h).
Holding ModuleMemory::HoldingOfCached(const HloInstruction* instruction) {
  auto it = holding_.find(instruction);
  if (it != holding_.end()) return it->second;
  Holding h = HoldingOf(*instruction);
  if (h == Holding::kFused) {
    auto limited = over_duplicated_.find(instruction->parent());
    if (limited == over_duplicated_.end()) {
      limited = over_duplicated_.emplace(instruction->parent(), OverDuplicatedProducers(*instruction->parent())).first;
    }
    if (limited->second.count(instruction)) h = Holding::kOwn;
  }
  return holding_[instruction] = h;
}

// Gives every instruction of `computation` (and of the computations its
// control flow runs, at the point where it runs them) a step.
void ModuleMemory::Walk(const HloComputation& computation) {
  computations_.push_back(&computation);
  ScheduleHooks hooks;
  hooks.folded = [this](const HloInstruction& i) { return FoldedAway(&i); };
  hooks.has_prologue = [](const HloInstruction& i) { return PrologueBytes(i) > 0; };
  for (const ScheduledStep& step : BreadthFirstSchedule(computation, hooks, later_readers_first_)) {
    const HloInstruction* instruction = step.instruction;
    if (step.prologue) {
      prologue_start_[instruction] = ++clock_;
      schedule_.push_back(instruction);
      continue;
    }
    LeavesOf(instruction);
    start_[instruction] = ++clock_;
    schedule_.push_back(instruction);
    for (const HloComputation* called : RunComputations(*instruction)) Walk(*called);
    if (clock_ == start_[instruction]) {
      end_[instruction] = clock_;
    } else {
      end_[instruction] = ++clock_;
      schedule_.push_back(instruction);  // the loop or call returns
    }
  }
}

void ModuleMemory::AliasViewsAndControlFlow() {
  for (const HloComputation* computation : computations_) {
    for (const auto& owned : computation->instructions()) {
      const HloInstruction* instruction = owned.get();
      if (!start_.count(instruction)) continue;
      switch (instruction->opcode()) {
        case HloOpcode::kTuple: {
          int64_t first = 0;
          for (const HloInstruction* operand : instruction->operands()) {
            UnionRange(instruction, first, operand);
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
          UnionRange(tuple, first, instruction);
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
          if (HoldingOfCached(instruction) == Holding::kOperand && instruction->operand_count() > 0 &&
              LeafCount(instruction->shape()) == LeafCount(instruction->operand(0)->shape())) {
            UnionRange(instruction, 0, instruction->operand(0));
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
void ModuleMemory::AliasWhile(const HloInstruction& loop) {
  const HloComputation* body = loop.CalledComputation("body");
  const HloComputation* condition = loop.CalledComputation("condition");
  if (body == nullptr || condition == nullptr) return;
  UnionRange(&loop, 0, body->parameter(0));
  UnionRange(&loop, 0, condition->parameter(0));
  // The body's result is the state, but for an element the body returns
  // from another's place: XLA copies it there (copy insertion).
  const std::vector<int64_t> returned = ReturnedParameterLeaves(*body);
  const std::vector<int>& result = LeavesOf(body->root());
  const std::vector<int>& leaves = LeavesOf(&loop);
  for (size_t k = 0; k < leaves.size() && k < result.size(); ++k) {
    if (k < returned.size() && returned[k] >= 0 && returned[k] != static_cast<int64_t>(k)) {
      // The copy is made when the body ends, beside the others.
      loop_copies_.push_back({leaf_[result[k]].bytes, start_[body->root()], start_[body->root()]});
      continue;
    }
    Union(leaves[k], result[k]);
  }
  if (loop_bodies_.insert(body).second) loop_body_order_.push_back(body);
  const HloInstruction* init = loop.operand(0);
  const std::vector<int>& state = LeavesOf(&loop);
  const std::vector<int>& initial = LeavesOf(init);
  const std::vector<const HloInstruction*> sources = InitialLeaves(*init);
  // A value that initialises several elements of the state is written in
  // place into one of them only; XLA copies it into the others.
  std::unordered_set<const HloInstruction*> taken;
  const std::vector<bool> passes = PassThroughLeaves(*body);
  // XLA's simplifier drops an element that repeats another: one buffer.
  const std::vector<int> repeats = RepeatedLoopElements(loop);
  for (size_t k = 0; k < state.size() && k < initial.size(); ++k) {
    if (k < repeats.size() && repeats[k] >= 0) {
      Union(state[k], state[repeats[k]]);
      continue;
    }
    bool in_place = k < passes.size() && passes[k];
    const HloInstruction* element = k < sources.size() ? sources[k] : nullptr;
    if (!in_place && element != nullptr) {
      const Holding h = HoldingOfCached(element);
      in_place = element->user_count() == 1 && h == Holding::kOwn && taken.insert(element).second;
    }
    if (in_place) {
      Union(state[k], initial[k]);
      continue;
    }
    // XLA's copy insertion copies the initial value into the state
    // buffer. The copy reads only that value, so the breadth-first
    // scheduler runs it as soon as the value exists (at the start of the
    // computation, for a literal or a parameter), not when the loop
    // starts: the state buffer is alive from then on.
    copied_from_[state[k]] = start_[element != nullptr ? element : init];
  }
}

// A called computation reads its operands where they are and writes its
// result where the caller's result is.
void ModuleMemory::AliasCalls(const HloInstruction& instruction) {
  for (const HloComputation* callee : instruction.called_computations()) {
    if (callee == nullptr) continue;
    UnionRange(&instruction, 0, callee->root());
    const std::vector<HloInstruction*> parameters = callee->parameters();
    // A conditional's operand 0 is the branch index.
    const int offset = instruction.Is(HloOpcode::kConditional) ? 1 : 0;
    for (size_t p = 0; p < parameters.size(); ++p) {
      const int index = static_cast<int>(p) + offset;
      if (index < instruction.operand_count() && instruction.Is(HloOpcode::kCall)) {
        UnionRange(parameters[p], 0, instruction.operand(index));
      } else if (index < instruction.operand_count() && parameters.size() == 1) {
        UnionRange(parameters[p], 0, instruction.operand(index));
      }
    }
  }
}

// Whether `instruction` computes nothing of its own at its step: fusion
// folds it into its readers, or it is a view of such a value.
bool ModuleMemory::FoldedAway(const HloInstruction* instruction) {
  const Holding h = HoldingOfCached(instruction);
  if (h == Holding::kFused) return true;
  if (h == Holding::kOperand && instruction->operand_count() == 1 &&
      !instruction->Is(HloOpcode::kGetTupleElement) && !instruction->Is(HloOpcode::kTuple)) {
    return FoldedAway(instruction->operand(0));
  }
  return false;
}

// The buffers `reader` reads at its step, looking through what fusion
// folds into it; `elementwise` says whether the path from each is
// elementwise (so that the reader may write over it).
void ModuleMemory::Inputs(const HloInstruction* reader, bool elementwise,
            std::vector<std::pair<const HloInstruction*, bool>>* inputs) {
  for (const HloInstruction* operand : reader->operands()) {
    if (FoldedAway(operand)) {
      // A reshape to the shape it already has is no reshape (XLA's
      // simplifier removes it): the path stays elementwise.
      const bool identity = operand->Is(HloOpcode::kReshape) && operand->shape().IsArray() &&
                            operand->operand(0)->shape().IsArray() &&
                            operand->shape().dims() == operand->operand(0)->shape().dims();
      Inputs(operand, elementwise && (operand->IsElementwise() || identity), inputs);
    } else {
      inputs->push_back({operand, elementwise && !ReshapedView(*operand)});
    }
  }
}

// Whether `view` is its buffer seen through a reshape that changes its
// dimensions. XLA fuses that reshape (a bitcast once layouts are
// assigned) into the loop that reads it, and a loop that reads an operand
// through a bitcast is not elementwise in it: it never writes over it.
bool ModuleMemory::ReshapedView(const HloInstruction& view) {
  for (const HloInstruction* at = &view; HoldingOfCached(at) == Holding::kOperand && at->operand_count() == 1;
       at = at->operand(0)) {
    const bool reshape = at->Is(HloOpcode::kReshape) || at->Is(HloOpcode::kBitcast);
    if (reshape && at->shape().IsArray() && at->operand(0)->shape().IsArray() &&
        at->shape().dims() != at->operand(0)->shape().dims()) {
      return true;
    }
  }
  return false;
}

// Each instruction with its step, in schedule order. Whatever is done
// instruction by instruction and adds buffers walks them so: the order breaks
// ties between buffers, and must not depend on where instructions sit in
// memory (as the iteration order of start_, a map by address, does).
std::vector<std::pair<int64_t, const HloInstruction*>> ModuleMemory::ByStep() const {
  std::vector<std::pair<int64_t, const HloInstruction*>> order;
  for (const auto& [instruction, step] : start_) order.push_back({step, instruction});
  std::sort(order.begin(), order.end());
  return order;
}

void ModuleMemory::Use(const HloInstruction* instruction, int64_t step) {
  for (int leaf : LeavesOf(instruction)) last_use_[leaf] = std::max(last_use_[leaf], step);
}

void ModuleMemory::RecordUses() {
  last_use_.assign(leaf_.size(), -1);
  for (const auto& [instruction, step] : start_) {
    if (FoldedAway(instruction)) continue;
    const Holding h = HoldingOfCached(instruction);
    if (h == Holding::kOperand && !instruction->Is(HloOpcode::kCall)) continue;
    if (h == Holding::kParameter || h == Holding::kConstant) continue;
    std::vector<std::pair<const HloInstruction*, bool>> inputs;
    Inputs(instruction, instruction->IsElementwise(), &inputs);
    const int64_t at = instruction->Is(HloOpcode::kWhile) ? end_[instruction] : step;
    for (const auto& input : inputs) Use(input.first, TransposedCopyStep(*instruction, *input.first, at));
  }
  for (const HloComputation* computation : computations_) {
    // A computation's result is read when it returns.
    Use(computation->root(), end_[computation->root()] + 1);
  }
}

// The step at which `reader` reads `input` (`at`, its own step), or, when
// `reader` is a dot that reads a transposed copy of it (dot_operand_copies.h),
// the step where the copy is made: as soon as the value is written.
int64_t ModuleMemory::TransposedCopyStep(const HloInstruction& reader, const HloInstruction& input, int64_t at) {
  if (!reader.Is(HloOpcode::kDot)) return at;
  int64_t copied = at;
  for (int i = 0; i < 2 && i < reader.operand_count(); ++i) {
    if (reader.operand(i) != &input) continue;
    const HloInstruction* buffer = DotOperandBuffer(reader, i);
    if (!DotTransposesOperand(reader, i) || WrittenTransposed(*buffer) || !start_.count(buffer)) return at;
    copied = std::min(copied, start_[buffer]);
  }
  return copied;
}

// XLA writes a dynamic-update-slice into the buffer it updates, and an
// elementwise loop over the buffer of an operand that dies there.
void ModuleMemory::ShareInPlace() {
  IndexGroups();
  for (const auto& [step, instruction] : ByStep()) {
    if (instruction->Is(HloOpcode::kSort) && HoldingOfCached(instruction) == Holding::kOwn) {
      ShareSortedOperands(*instruction, step);
      continue;
    }
    if (HoldingOfCached(instruction) != Holding::kOwn || !instruction->shape().IsArray()) continue;
    std::vector<std::pair<const HloInstruction*, bool>> candidates;
    const int mine = LeavesOf(instruction)[0];
    if (instruction->Is(HloOpcode::kDynamicUpdateSlice) || instruction->Is(HloOpcode::kScatter)) {
      if (!FoldedAway(instruction->operand(0))) candidates.push_back({instruction->operand(0), true});
    } else if (IsLoopFusible(*instruction) && MayWriteOverOperands(*instruction, mine, step) &&
               !WrittenTransposed(*instruction)) {
      Inputs(instruction, instruction->IsElementwise(), &candidates);
    }
    for (const auto& [operand, elementwise] : candidates) {
      if (!elementwise || !operand->shape().IsArray() || InParallelCall(*operand)) continue;
      const int theirs = LeavesOf(operand)[0];
      if (leaf_[theirs].bytes != leaf_[mine].bytes || !Dies(theirs, step, group_result_[Find(mine)])) continue;
      Merge(mine, theirs);
      break;
    }
  }
}

// Whether XLA may sort `operand` in place: the sort is its only reader,
// it is an array in a buffer of its own, written by neither a parallel
// call nor an outlined loop.
bool ModuleMemory::SortableInPlace(const HloInstruction& operand) {
  return operand.user_count() == 1 && operand.shape().IsArray() && !FoldedAway(&operand) &&
         !InParallelCall(operand) && !Outlined(operand);
}

void ModuleMemory::ShareSortedOperands(const HloInstruction& sort, int64_t step) {
  // XLA CPU runs a top-k as a library call that writes buffers of its own.
  if (XlaRunsAsTopK(sort)) return;
  const std::vector<int>& mine = LeavesOf(&sort);
  for (int i = 0; i < sort.operand_count() && i < static_cast<int>(mine.size()); ++i) {
    const HloInstruction* operand = sort.operand(i);
    if (!SortableInPlace(*operand)) continue;
    // XLA gives a sorted array that is a result of the entry its own
    // allocation, which no operand shares.
    if (group_result_[Find(mine[i])]) continue;
    const int theirs = LeavesOf(operand)[0];
    if (leaf_[theirs].bytes != leaf_[mine[i]].bytes || !Dies(theirs, step, false)) continue;
    Merge(mine[i], theirs);
  }
}

// XLA decomposes a top-k it has no kernel for (not f32) into a sort of
// its operand and an iota of indices, which sorts the operand in place
// when nothing else reads it and it dies there (as ShareSortedOperands):
// the operand's bytes of the expansion's scratch are then its own buffer.
int64_t ModuleMemory::TopKSortedInPlaceBytes(const HloInstruction& topk, int64_t step) {
  if (!topk.Is(HloOpcode::kTopK) || topk.operand_count() != 1 || ScratchBytes(topk) == 0) return 0;
  const HloInstruction* operand = topk.operand(0);
  if (!SortableInPlace(*operand)) return 0;
  return Dies(LeavesOf(operand)[0], step, false) ? operand->shape().ByteSize() : 0;
}

// Whether the elementwise loop `instruction` (leaf `mine`, at `step`) may
// write its result over an operand that dies there. Not when it writes a
// running loop's state (a body's update of an accumulator): that buffer is
// alive all through the loop, so the operand keeps a buffer of its own.
// Not when XLA outlines it for threads, unless the operand can take the
// entry's result buffer, which XLA assigns before any temporary.
bool ModuleMemory::MayWriteOverOperands(const HloInstruction& instruction, int mine, int64_t step) {
  const int root = Find(mine);
  if (group_loop_start_[root] < step) return false;
  return group_pinned_[root] || !Outlined(instruction);
}

// Whether XLA's parallel task assigner moves `instruction` into a call of
// its own, which then cannot write over the operands the call holds.
bool ModuleMemory::Outlined(const HloInstruction& instruction) {
  if (parallel_computations_.empty()) parallel_computations_ = ParallelTaskComputations(module_);
  if (!parallel_computations_.count(instruction.parent())) return false;
  LoopCost cost;
  cost.bytes = instruction.shape().ByteSize();
  std::vector<std::pair<const HloInstruction*, bool>> inputs;
  Inputs(&instruction, true, &inputs);
  for (const auto& input : inputs) {
    if (input.first->shape().IsArray()) cost.bytes += input.first->shape().ByteSize();
  }
  CountLoopOps(instruction, &cost);
  return OutlinedForParallelTasks(instruction, cost);
}

// The elementwise operations of the loop `instruction` runs, with the
// producers fusion folds into it.
void ModuleMemory::CountLoopOps(const HloInstruction& instruction, LoopCost* cost) {
  if (instruction.IsElementwise()) {
    const int64_t elements = instruction.shape().ElementCount();
    (IsTranscendental(instruction) ? cost->transcendentals : cost->flops) += elements;
  }
  for (const HloInstruction* operand : instruction.operands()) {
    if (FoldedAway(operand)) CountLoopOps(*operand, cost);
  }
}

// Per buffer (union-find root): its last reader's step, and whether it
// may not be written over (a parameter, a literal or an entry result).
void ModuleMemory::IndexGroups() {
  group_last_.assign(leaf_.size(), -1);
  group_pinned_.assign(leaf_.size(), false);
  group_loop_start_.assign(leaf_.size(), clock_ + 1);
  group_loop_end_.assign(leaf_.size(), -1);
  group_state_.assign(leaf_.size(), false);
  group_result_.assign(leaf_.size(), false);
  const HloInstruction* result = module_.entry()->root();
  const std::vector<const Shape*> aliased = AliasedOutputs(module_);
  for (size_t i = 0; i < leaf_.size(); ++i) {
    const int root = Find(static_cast<int>(i));
    group_last_[root] = std::max(group_last_[root], last_use_[i]);
    if (leaf_[i].instruction->Is(HloOpcode::kWhile)) {
      group_loop_start_[root] = std::min(group_loop_start_[root], start_[leaf_[i].instruction]);
      group_loop_end_[root] = std::max(group_loop_end_[root], end_[leaf_[i].instruction]);
    }
    // The parameter of a loop body or condition is the loop's state: it
    // may not be written over while the loop runs, but once the loop has
    // returned it is a temporary like any other.
    const Holding h = HoldingOfCached(leaf_[i].instruction);
    const bool argument = h == Holding::kParameter && leaf_[i].instruction->parent() == module_.entry();
    if (argument || h == Holding::kConstant || leaf_[i].instruction == result) {
      group_pinned_[root] = true;
    } else if (h == Holding::kParameter) {
      group_state_[root] = true;
    }
    // The entry's result, unless the header puts it in a parameter's
    // buffer (alive from the start, so no loop's state can become it).
    if (leaf_[i].instruction == result &&
        std::find(aliased.begin(), aliased.end(), leaf_[i].shape) == aliased.end()) {
      group_result_[root] = true;
    }
  }
}

void ModuleMemory::Merge(int a, int b) {
  const int ra = Find(a), rb = Find(b);
  if (ra == rb) return;
  parent_[ra] = rb;
  group_last_[rb] = std::max(group_last_[rb], group_last_[ra]);
  group_pinned_[rb] = group_pinned_[rb] || group_pinned_[ra];
  group_loop_start_[rb] = std::min(group_loop_start_[rb], group_loop_start_[ra]);
  group_loop_end_[rb] = std::max(group_loop_end_[rb], group_loop_end_[ra]);
  group_state_[rb] = group_state_[rb] || group_state_[ra];
  group_result_[rb] = group_result_[rb] || group_result_[ra];
}

// Whether the buffer of `leaf` is a temporary whose last reader runs at
// `step`. A loop's state is one only after the loop has returned, and
// then only for the entry's result, which XLA assigns first (it writes
// the result over the state the loop leaves).
bool ModuleMemory::Dies(int leaf, int64_t step, bool into_result) {
  const int root = Find(leaf);
  if (group_state_[root] && !(into_result && group_loop_end_[root] >= 0 && step > group_loop_end_[root])) {
    return false;
  }
  return !group_pinned_[root] && group_last_[root] == step;
}

}  // namespace memory_internal

using memory_internal::ModuleMemory;

ModuleBuffers PredictBuffers(const HloModule& module) {
  // The model predicts the module as XLA fuses it: simplified first.
  SimplifiedModule simplified = SimplifyAsXla(module);
  const HloModule& fused = *simplified.module;
  const std::set<std::string>& shared_expansions = simplified.shared_expansions;
  // Where the order of instructions that become ready together is unknown,
  // the model takes the order that needs more memory: a prediction may err
  // high, not low.
  ModuleBuffers one = ModuleMemory(fused, false, shared_expansions).Predict();
  ModuleBuffers other = ModuleMemory(fused, true, shared_expansions).Predict();
  ModuleBuffers& higher = other.prediction.peak_bytes() > one.prediction.peak_bytes() ? other : one;
  higher.inlined = std::move(simplified.module);
  return std::move(higher);
}

MemoryPrediction PredictMemory(const HloModule& module) {
  return PredictBuffers(module).prediction;
}

MemoryPrediction PredictMemory(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  return PredictMemory(*module);
}

}  // namespace exla
