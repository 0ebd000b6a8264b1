#include "model/buffers/schedule.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace exla {
namespace {

// What the scheduler knows of the subgraph under an instruction: how many
// extra uses its values have and how many bytes they define (a shared
// operand counted once per path, as XLA counts it).
struct SubgraphStats {
  int64_t extra_users = 0;
  int64_t total_bytes = 0;
};

class DepthFirstWalk {
 public:
  DepthFirstWalk(const HloComputation& computation,
                 const std::function<int64_t(const HloInstruction&)>& bytes) {
    for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
      SubgraphStats& s = stats_[instruction];
      s.extra_users = std::max(0, instruction->user_count() - 1);
      s.total_bytes = bytes(*instruction);
      for (const HloInstruction* operand : instruction->operands()) {
        s.extra_users += stats_[operand].extra_users;
        s.total_bytes += stats_[operand].total_bytes;
      }
    }
  }

  // Post-order from `start`, operands (and control predecessors) heavy first.
  void Visit(const HloInstruction* start) {
    std::vector<std::pair<const HloInstruction*, bool>> stack = {{start, false}};
    while (!stack.empty()) {
      auto [instruction, expanded] = stack.back();
      stack.pop_back();
      if (done_.count(instruction)) continue;
      if (expanded) {
        done_.insert(instruction);
        order_.push_back(instruction);
        continue;
      }
      stack.push_back({instruction, true});
      std::vector<const HloInstruction*> inputs(instruction->operands().begin(),
                                                instruction->operands().end());
      inputs.insert(inputs.end(), instruction->control_predecessors().begin(),
                    instruction->control_predecessors().end());
      std::sort(inputs.begin(), inputs.end(), [this](const HloInstruction* a, const HloInstruction* b) {
        const SubgraphStats& x = stats_[a];
        const SubgraphStats& y = stats_[b];
        if (x.extra_users != y.extra_users) return x.extra_users > y.extra_users;
        if (x.total_bytes != y.total_bytes) return x.total_bytes > y.total_bytes;
        return a->name() < b->name();
      });
      // Pushed in reverse so that the first in order is visited first.
      for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
        if (!done_.count(*it)) stack.push_back({*it, false});
      }
    }
  }

  std::vector<const HloInstruction*> Take() { return std::move(order_); }

 private:
  std::unordered_map<const HloInstruction*, SubgraphStats> stats_;
  std::unordered_set<const HloInstruction*> done_;
  std::vector<const HloInstruction*> order_;
};

// Kahn's algorithm with a first-in first-out queue over the instructions
// fusion leaves, as XLA's breadth-first scheduler runs it on the fused
// computation. Nodes are those instructions plus the prologues of those
// that have one (a prologue reads the instruction's operand 1 and the
// instruction reads the prologue).
class BreadthFirstWalk {
 public:
  BreadthFirstWalk(const HloComputation& computation, const ScheduleHooks& hooks, bool later_first)
      : hooks_(hooks) {
    int64_t index = 0;
    for (const auto& owned : computation.instructions()) position_[owned.get()] = index++;
    for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
      if (hooks_.folded(*instruction)) continue;
      std::vector<int> inputs;
      if (hooks_.has_prologue && hooks_.has_prologue(*instruction) && instruction->operand_count() > 1) {
        std::vector<int> kernel;
        NodeInputs(instruction->operand(1), &kernel, /*self=*/true);
        inputs.push_back(AddNode({instruction, true}, kernel));
      }
      NodeInputs(instruction, &inputs, /*self=*/false);
      AddNode({instruction, false}, inputs);
    }
    AddEpilogues();
    AddResultCopies(computation);
    // XLA's users lists follow the order in which uses were made: the
    // computation's order of the readers, one way or the other.
    for (std::vector<int>& readers : readers_) {
      std::sort(readers.begin(), readers.end(), [this, later_first](int a, int b) {
        const int64_t x = Position(a), y = Position(b);
        if (x != y) return later_first ? x > y : x < y;
        return nodes_[a].prologue && !nodes_[b].prologue;
      });
    }
  }

  std::vector<ScheduledStep> Run(const HloComputation& computation) {
    std::deque<int> ready = InitiallyReady();
    while (!ready.empty()) {
      const int node = ready.front();
      ready.pop_front();
      if (nodes_[node].prologue || nodes_[node].result_copy) {
        order_.push_back(nodes_[node]);
      } else if (!silent_.count(node)) {
        EmitWithFolded(nodes_[node].instruction);
      }
      for (int reader : readers_[node]) {
        if (--pending_[reader] == 0) ready.push_back(reader);
      }
    }
    // What no instruction reads (dead code XLA removes) still gets a step.
    for (const auto& owned : computation.instructions()) EmitWithFolded(owned.get());
    return std::move(order_);
  }

 private:
  // The nodes that read nothing, in the order XLA's scheduler finds them
  // (hlo_memory_scheduler.cc, BFSMemoryScheduler: the computation's
  // instructions in order of their ids). The module XLA compiles comes
  // through StableHLO, which numbers a function's parameters first, in
  // their order, then the literals and the rest: a parameter is ready
  // before any literal, and what waits for a literal (a lone reduce and its
  // init value) after what waits only for parameters.
  std::deque<int> InitiallyReady() const {
    std::vector<int> parameters, others;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (pending_[n] != 0) continue;
      const HloInstruction* instruction = nodes_[n].instruction;
      const bool parameter = !nodes_[n].prologue && instruction->Is(HloOpcode::kParameter);
      (parameter ? parameters : others).push_back(static_cast<int>(n));
    }
    std::stable_sort(parameters.begin(), parameters.end(), [this](int a, int b) {
      return nodes_[a].instruction->parameter_number() < nodes_[b].instruction->parameter_number();
    });
    std::deque<int> ready(parameters.begin(), parameters.end());
    ready.insert(ready.end(), others.begin(), others.end());
    return ready;
  }

  // A second step after each node with an epilogue that more than one
  // node reads (one reader fuses the final step): its readers wait for it.
  // It emits nothing; the instruction's buffer is written at the first.
  void AddEpilogues() {
    if (!hooks_.has_epilogue) return;
    const size_t count = nodes_.size();
    for (size_t n = 0; n < count; ++n) {
      if (nodes_[n].prologue || readers_[n].size() < 2 || !hooks_.has_epilogue(*nodes_[n].instruction)) continue;
      const int second = static_cast<int>(nodes_.size());
      nodes_.push_back(nodes_[n]);
      pending_.push_back(1);
      readers_.push_back(std::move(readers_[n]));
      readers_[n] = {second};
      silent_.insert(second);
    }
  }

  // A copy after each value of the root tuple that XLA copies into the
  // result's layout, which the root waits for. Layout assignment adds the
  // copy as the computation's last instruction.
  void AddResultCopies(const HloComputation& computation) {
    if (!hooks_.has_result_copy) return;
    auto root = node_of_.find(computation.root());
    if (root == node_of_.end()) return;
    const size_t count = nodes_.size();
    for (size_t n = 0; n < count; ++n) {
      if (nodes_[n].prologue || silent_.count(static_cast<int>(n)) || static_cast<int>(n) == root->second ||
          !hooks_.has_result_copy(*nodes_[n].instruction)) {
        continue;
      }
      const int copy = static_cast<int>(nodes_.size());
      readers_[n].push_back(copy);
      nodes_.push_back({nodes_[n].instruction, false, true});
      pending_.push_back(1);
      readers_.push_back({root->second});
      ++pending_[root->second];
      copy_position_[copy] = position_[computation.root()];
    }
  }

  // The node's place in the computation's order of instructions.
  int64_t Position(int node) {
    auto copy = copy_position_.find(node);
    return copy != copy_position_.end() ? copy->second : position_[nodes_[node].instruction];
  }

  int AddNode(const ScheduledStep& step, const std::vector<int>& inputs) {
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back(step);
    pending_.push_back(static_cast<int64_t>(inputs.size()));
    readers_.emplace_back();
    for (int input : inputs) readers_[input].push_back(id);
    if (!step.prologue) node_of_[step.instruction] = id;
    return id;
  }

  // The operands and control predecessors of `reader` (or, with `self`,
  // `reader` itself), and for each whether fusion folds it into the reader.
  std::vector<std::pair<const HloInstruction*, bool>> DirectInputs(const HloInstruction* reader, bool self) {
    std::vector<const HloInstruction*> direct;
    if (self) {
      direct.push_back(reader);
    } else {
      direct.assign(reader->operands().begin(), reader->operands().end());
      direct.insert(direct.end(), reader->control_predecessors().begin(),
                    reader->control_predecessors().end());
    }
    std::vector<std::pair<const HloInstruction*, bool>> inputs;
    for (const HloInstruction* operand : direct) {
      const bool through = self || !hooks_.reads_through ? hooks_.folded(*operand)
                                                          : hooks_.reads_through(*operand, *reader);
      inputs.push_back({operand, through});
    }
    return inputs;
  }

  // A literal of one element: CpuInstructionFusion fuses it into any fusion
  // that reads it (cpu_instruction_fusion.cc, ShouldFuse: only a fusion of
  // a constant and one other instruction is refused), so a fused loop does
  // not wait for it in XLA's schedule.
  static bool IsScalarLiteral(const HloInstruction& instruction) {
    return instruction.Is(HloOpcode::kConstant) && instruction.shape().IsArray() &&
           instruction.shape().ElementCount() == 1;
  }

  // The nodes that `reader` reads (or, with `self`, that it is), directly
  // or through what fusion folds into it, each once. Nodes are made in post
  // order, so those of the operands exist. `in_fusion`: the reader is a
  // fused loop (it folds a producer), whose scalar literals are fused too.
  void NodeInputs(const HloInstruction* reader, std::vector<int>* inputs, bool self, bool in_fusion = false) {
    const std::vector<std::pair<const HloInstruction*, bool>> direct = DirectInputs(reader, self);
    for (const auto& [operand, through] : direct) in_fusion = in_fusion || through;
    for (const auto& [operand, through] : direct) {
      if (through) {
        NodeInputs(operand, inputs, false, in_fusion);
        continue;
      }
      if (in_fusion && IsScalarLiteral(*operand)) continue;
      auto it = node_of_.find(operand);
      if (it != node_of_.end() && std::find(inputs->begin(), inputs->end(), it->second) == inputs->end()) {
        inputs->push_back(it->second);
      }
    }
  }

  // Places the folded instructions `instruction` reads, then it.
  void EmitWithFolded(const HloInstruction* instruction) {
    if (emitted_.count(instruction)) return;
    emitted_.insert(instruction);
    for (const HloInstruction* operand : instruction->operands()) {
      if (hooks_.folded(*operand)) EmitWithFolded(operand);
    }
    order_.push_back({instruction, false});
  }

  const ScheduleHooks& hooks_;
  std::unordered_map<const HloInstruction*, int64_t> position_;
  std::unordered_map<const HloInstruction*, int> node_of_;
  std::vector<ScheduledStep> nodes_;
  std::vector<int64_t> pending_;
  std::vector<std::vector<int>> readers_;
  std::unordered_set<const HloInstruction*> emitted_;
  std::unordered_set<int> silent_;
  std::unordered_map<int, int64_t> copy_position_;
  std::vector<ScheduledStep> order_;
};

}  // namespace

std::vector<ScheduledStep> BreadthFirstSchedule(const HloComputation& computation,
                                                const ScheduleHooks& hooks, bool later_readers_first) {
  return BreadthFirstWalk(computation, hooks, later_readers_first).Run(computation);
}

std::vector<const HloInstruction*> DepthFirstSchedule(
    const HloComputation& computation, const std::function<int64_t(const HloInstruction&)>& bytes) {
  DepthFirstWalk walk(computation, bytes);
  for (const auto& instruction : computation.instructions()) {
    if (instruction->users().empty() && instruction.get() != computation.root()) {
      walk.Visit(instruction.get());
    }
  }
  walk.Visit(computation.root());
  // Parameters no path reaches still belong to the computation.
  std::vector<const HloInstruction*> order = walk.Take();
  return order;
}

}  // namespace exla
