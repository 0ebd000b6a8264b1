// The order in which XLA's CPU backend runs the instructions of a
// computation: its depth-first memory scheduler.
//
// XLA's CPU compiler gives buffer assignment a sequential schedule built by
// a depth-first walk from the root that visits first the operand whose
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

}  // namespace exla

#endif  // EXLA_ANALYSIS_SCHEDULE_H_
