// The order in which XLA's CPU backend runs the instructions of a
// computation.
//
// XLA's CPU compiler schedules breadth-first by default (its
// concurrency-optimised scheduler, xla_cpu_enable_concurrency_optimized_
// scheduler): an instruction runs once all its operands have, in the order
// it became ready, so independent work (weights rearranged for a
// convolution, loop-invariant values) all runs early and stays alive until
// its readers. With that option off it uses a memory-aware depth-first walk from the root that visits first the operand whose
// subgraph has the most values with several users, then the one that
// defines the most bytes (ties by name): heavy subgraphs finish before light
// ones start, so their temporaries die early. Instructions no path leads
// from to the root (side effects) are walked first, as XLA walks them.
#ifndef EXLA_MODEL_BUFFERS_SCHEDULE_H_
#define EXLA_MODEL_BUFFERS_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/computation.h"

namespace exla {

// The instructions of `computation` in XLA's depth-first memory order.
// `bytes` gives the bytes an instruction defines (0 for what fusion folds
// away), which orders the operands.
std::vector<const HloInstruction*> DepthFirstSchedule(
    const HloComputation& computation, const std::function<int64_t(const HloInstruction&)>& bytes);

// What the breadth-first schedule needs to know of fusion.
struct ScheduleHooks {
  // Whether fusion folds the instruction into its readers (it is then no
  // step of its own in XLA's schedule).
  std::function<bool(const HloInstruction&)> folded;
  // Whether the reader computes the operand in its own loop rather than wait
  // for its buffer (folded, or copied into this reader); unset: `folded`.
  std::function<bool(const HloInstruction& operand, const HloInstruction& reader)> reads_through;
  // Whether XLA computes a value from the instruction's operand 1 alone
  // before running it (convolution_layout.h's PrologueBytes): that work is a step
  // of its own, ready as soon as the operand is.
  std::function<bool(const HloInstruction&)> has_prologue;
  // Whether XLA runs the instruction as two steps, the second of which is
  // fused into its reader where only one loop reads it (a tree reduction's
  // final reduce, tree_reduction.h): several readers wait for the second.
  std::function<bool(const HloInstruction&)> has_epilogue;
  // Whether XLA copies the instruction, an element of the root tuple, into
  // the result's layout (expand/result_layout_copy.h): the copy is a step of
  // its own, ready as soon as the instruction has run, that the root waits for.
  std::function<bool(const HloInstruction&)> has_result_copy;
};

// One step: an instruction, the prologue of one, or its copy into the
// result's layout.
struct ScheduledStep {
  const HloInstruction* instruction = nullptr;
  bool prologue = false;
  bool result_copy = false;
};

// The instructions of `computation` in XLA's breadth-first order, taken over
// what remains after fusion. Each folded instruction is placed just before
// the first instruction that reads it, so that every instruction has a step.
//
// Instructions that become ready together run in the order of their
// operands' users lists, which XLA's fusion reorders (it builds fusions
// from the root backwards); `later_readers_first` picks which of the two
// orders of the module's text to assume.
std::vector<ScheduledStep> BreadthFirstSchedule(const HloComputation& computation,
                                                const ScheduleHooks& hooks, bool later_readers_first = false);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_SCHEDULE_H_
