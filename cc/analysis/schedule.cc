#include "analysis/schedule.h"

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
// computation.
class BreadthFirstWalk {
 public:
  BreadthFirstWalk(const HloComputation& computation,
                   const std::function<bool(const HloInstruction&)>& folded, bool later_first)
      : folded_(folded) {
    int64_t index = 0;
    for (const auto& owned : computation.instructions()) position_[owned.get()] = index++;
    for (const auto& owned : computation.instructions()) {
      const HloInstruction* node = owned.get();
      if (folded_(*node)) continue;
      std::vector<const HloInstruction*> inputs;
      NodeInputs(node, &inputs);
      pending_[node] = static_cast<int64_t>(inputs.size());
      for (const HloInstruction* input : inputs) readers_[input].push_back(node);
      nodes_.push_back(node);
    }
    // XLA's users lists follow the order in which uses were made: the
    // computation's order of the readers, one way or the other.
    for (auto& [node, readers] : readers_) {
      std::sort(readers.begin(), readers.end(), [this, later_first](const HloInstruction* a, const HloInstruction* b) {
        return later_first ? position_[a] > position_[b] : position_[a] < position_[b];
      });
    }
  }

  std::vector<const HloInstruction*> Run(const HloComputation& computation) {
    std::deque<const HloInstruction*> ready;
    for (const HloInstruction* node : nodes_) {
      if (pending_[node] == 0) ready.push_back(node);
    }
    while (!ready.empty()) {
      const HloInstruction* node = ready.front();
      ready.pop_front();
      EmitWithFolded(node);
      for (const HloInstruction* reader : readers_[node]) {
        if (--pending_[reader] == 0) ready.push_back(reader);
      }
    }
    // What no instruction reads (dead code XLA removes) still gets a step.
    for (const auto& owned : computation.instructions()) EmitWithFolded(owned.get());
    return std::move(order_);
  }

 private:
  // The instructions left after fusion that `reader` reads, directly or
  // through what fusion folds into it, each once.
  void NodeInputs(const HloInstruction* reader, std::vector<const HloInstruction*>* inputs) {
    std::vector<const HloInstruction*> direct(reader->operands().begin(), reader->operands().end());
    direct.insert(direct.end(), reader->control_predecessors().begin(),
                  reader->control_predecessors().end());
    for (const HloInstruction* operand : direct) {
      if (folded_(*operand)) {
        NodeInputs(operand, inputs);
      } else if (std::find(inputs->begin(), inputs->end(), operand) == inputs->end()) {
        inputs->push_back(operand);
      }
    }
  }

  // Places the folded instructions `instruction` reads, then it.
  void EmitWithFolded(const HloInstruction* instruction) {
    if (emitted_.count(instruction)) return;
    emitted_.insert(instruction);
    for (const HloInstruction* operand : instruction->operands()) {
      if (folded_(*operand)) EmitWithFolded(operand);
    }
    order_.push_back(instruction);
  }

  const std::function<bool(const HloInstruction&)>& folded_;
  std::unordered_map<const HloInstruction*, int64_t> position_;
  std::unordered_map<const HloInstruction*, int64_t> pending_;
  std::unordered_map<const HloInstruction*, std::vector<const HloInstruction*>> readers_;
  std::vector<const HloInstruction*> nodes_;
  std::unordered_set<const HloInstruction*> emitted_;
  std::vector<const HloInstruction*> order_;
};

}  // namespace

std::vector<const HloInstruction*> BreadthFirstSchedule(
    const HloComputation& computation, const std::function<bool(const HloInstruction&)>& folded,
    bool later_readers_first) {
  return BreadthFirstWalk(computation, folded, later_readers_first).Run(computation);
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
