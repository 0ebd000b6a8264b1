// The steps of a whole module on XLA's sequential schedule.
//
// schedule.h orders one computation. XLA runs a while loop, a call or a
// conditional at its step by running the computations it holds (a loop's
// condition and body once, as buffer assignment sees one iteration), so
// the module's schedule walks into them there: every instruction gets the
// step it starts at and, for control flow, the step it returns at.
#ifndef EXLA_MODEL_BUFFERS_MODULE_SCHEDULE_H_
#define EXLA_MODEL_BUFFERS_MODULE_SCHEDULE_H_

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "model/fusion/fused_module.h"

namespace exla {

struct ModuleSchedule {
  // The computations in the order the walk enters them (one run twice is
  // listed twice).
  std::vector<const HloComputation*> computations;
  // The step each instruction starts at, the step it ends at (after its
  // computations for control flow, else the same), and the step of the
  // prologue of an instruction that has one (convolution_layout.h).
  // The step of the copy of a root tuple element into the result's layout
  // (expand/result_layout_copy.h).
  std::unordered_map<const HloInstruction*, int64_t> start, end, prologue_start, result_copy_start;
  // The instruction that runs at each step (step 0 is before the first).
  std::vector<const HloInstruction*> steps = {nullptr};
  // The instructions in the order of their start steps.
  std::vector<const HloInstruction*> started;
  // The first step of each computation (of its latest run, for a body).
  std::unordered_map<const HloComputation*, int64_t> first_step;

  int64_t last_step() const { return static_cast<int64_t>(steps.size()) - 1; }

  // The step `instruction` starts (ends) at; 0, before the first step, for
  // an instruction the walk did not reach.
  int64_t Start(const HloInstruction* instruction) const { return StepIn(start, instruction); }
  int64_t End(const HloInstruction* instruction) const { return StepIn(end, instruction); }

  // Each instruction with its step, in schedule order. Whatever adds
  // buffers instruction by instruction walks them so: the order breaks ties
  // between buffers, and must not depend on where instructions sit in
  // memory (as the iteration order of `start`, a map by address, does).
  std::vector<std::pair<int64_t, const HloInstruction*>> ByStep() const;

  // The first step of `computation` (0 when it has none).
  int64_t FirstStep(const HloComputation* computation) const;

 private:
  static int64_t StepIn(const std::unordered_map<const HloInstruction*, int64_t>& steps,
                        const HloInstruction* instruction) {
    auto it = steps.find(instruction);
    return it == steps.end() ? 0 : it->second;
  }
};

// The module's schedule, breadth first (schedule.h) over what `fusion`
// leaves; `later_readers_first` picks the order of readers that become
// ready together.
ModuleSchedule ScheduleModule(const HloModule& module, FusedModule* fusion, bool later_readers_first);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_MODULE_SCHEDULE_H_
