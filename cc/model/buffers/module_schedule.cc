#include "model/buffers/module_schedule.h"

#include <algorithm>

#include "ir/computation.h"
#include "ir/control_flow.h"
#include "model/buffers/schedule.h"
#include "model/expand/convolution_layout.h"
#include "model/expand/result_layout_copy.h"
#include "model/expand/tree_reduction.h"

namespace exla {
namespace {

class ScheduleWalker {
 public:
  ScheduleWalker(FusedModule* fusion, bool later_readers_first, ModuleSchedule* schedule)
      : fusion_(fusion), later_readers_first_(later_readers_first), schedule_(schedule) {}

  // Gives every instruction of `computation` (and of the computations its
  // control flow runs, at the point where it runs them) a step.
  void Walk(const HloComputation& computation) {
    schedule_->computations.push_back(&computation);
    ScheduleHooks hooks;
    hooks.folded = [this](const HloInstruction& i) { return fusion_->FoldedAway(&i); };
    hooks.reads_through = [this](const HloInstruction& operand, const HloInstruction& reader) {
      return fusion_->ReadsThrough(&operand, &reader);
    };
    hooks.has_prologue = [](const HloInstruction& i) { return PrologueBytes(i) > 0; };
    // XLA's final reduce of a tree reduction is an instruction of its own
    // where more than one instruction reads it (a reduce is expensive, and
    // CpuInstructionFusion copies no expensive producer into two loops).
    hooks.has_epilogue = [](const HloInstruction& i) { return IsTreeReduction(i); };
    // A transpose of a buffer (a parameter, a value fusion keeps, an
    // element of a loop's result) is a bitcast of it; of a reshape, or of
    // what fusion takes in, it is a loop.
    hooks.has_result_copy = [this](const HloInstruction& i) {
      return ResultLayoutCopyBytes(i, [this](const HloInstruction& source) {
               const Holding h = fusion_->HoldingOf(&source);
               return h == Holding::kOwn || h == Holding::kParameter || h == Holding::kConstant ||
                      source.Is(HloOpcode::kGetTupleElement);
             }) > 0;
    };
    for (const ScheduledStep& step : BreadthFirstSchedule(computation, hooks, later_readers_first_)) {
      const HloInstruction* instruction = step.instruction;
      if (step.prologue) {
        schedule_->prologue_start[instruction] = Next(instruction);
        continue;
      }
      if (step.result_copy) {
        schedule_->result_copy_start[instruction] = Next(instruction);
        continue;
      }
      schedule_->started.push_back(instruction);
      const int64_t start = schedule_->start[instruction] = Next(instruction);
      for (const HloComputation* called : RunComputations(*instruction)) Walk(*called);
      // Control flow returns at a step of its own.
      schedule_->end[instruction] = schedule_->last_step() == start ? start : Next(instruction);
    }
  }

 private:
  // A new step, at which `instruction` runs.
  int64_t Next(const HloInstruction* instruction) {
    schedule_->steps.push_back(instruction);
    return schedule_->last_step();
  }

  FusedModule* fusion_;
  const bool later_readers_first_;
  ModuleSchedule* schedule_;
};

}  // namespace

std::vector<std::pair<int64_t, const HloInstruction*>> ModuleSchedule::ByStep() const {
  std::vector<std::pair<int64_t, const HloInstruction*>> order;
  for (const auto& [instruction, step] : start) order.push_back({step, instruction});
  std::sort(order.begin(), order.end());
  return order;
}

int64_t ModuleSchedule::FirstStep(const HloComputation* computation) const {
  auto it = first_step.find(computation);
  return it == first_step.end() ? 0 : it->second;
}

ModuleSchedule ScheduleModule(const HloModule& module, FusedModule* fusion, bool later_readers_first) {
  ModuleSchedule schedule;
  ScheduleWalker(fusion, later_readers_first, &schedule).Walk(*module.entry());
  for (const auto& [instruction, step] : schedule.start) {
    auto [it, inserted] = schedule.first_step.emplace(instruction->parent(), step);
    if (!inserted) it->second = std::min(it->second, step);
  }
  return schedule;
}

}  // namespace exla
