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
#ifndef EXLA_ANALYSIS_SCHEDULE_H_
#define EXLA_ANALYSIS_SCHEDULE_H_

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

// The instructions of `computation` in XLA's breadth-first order, taken over
// what remains after fusion: `folded` says which instructions fusion folds
// into their readers. Each of those is placed just before the first
// instruction that reads it, so that every instruction has a step.
//
// Instructions that become ready together run in the order of their
// operands' users lists, which XLA's fusion reorders (it builds fusions
// from the root backwards); `later_readers_first` picks which of the two
// orders of the module's text to assume.
std::vector<const HloInstruction*> BreadthFirstSchedule(
    const HloComputation& computation, const std::function<bool(const HloInstruction&)>& folded,
    bool later_readers_first = false);

}  // namespace exla

#endif  // EXLA_ANALYSIS_SCHEDULE_H_
