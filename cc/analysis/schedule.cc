#include "analysis/schedule.h"

#include <algorithm>
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

}  // namespace

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
