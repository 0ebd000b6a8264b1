// What the buffer stage has found about one module when it adds up the
// figures of buffer assignment: the schedule, fusion's view, the leaves and
// which of them share buffers, their last uses, the loops' state, the
// values written in place. Built in this order by memory_model.cc; the
// functions that add the buffers beside the values (scratch.h,
// tuple_tables.h, copies.h) and the assignment (assignment.h) read it.
#ifndef EXLA_MODEL_BUFFERS_BUFFER_ANALYSES_H_
#define EXLA_MODEL_BUFFERS_BUFFER_ANALYSES_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/module.h"
#include "model/buffers/aliasing.h"
#include "model/buffers/in_place.h"
#include "model/buffers/leaf_buffers.h"
#include "model/buffers/module_schedule.h"
#include "model/fusion/fused_module.h"

namespace exla {

struct BufferAnalyses {
  const HloModule& module;
  const ModuleSchedule& schedule;
  FusedModule& fusion;                 // caches its answers
  LeafBuffers& leaves;                 // Find shortens paths
  const std::vector<int64_t>& last_use;  // per leaf (live_ranges.h)
  const LoopStateBuffers& loop_state;    // aliasing.h
  InPlaceSharing& in_place;
  // The expansions XLA leaves calls (simplify/expansion_calls.h).
  const std::set<std::string>& shared_expansions;
};

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_BUFFER_ANALYSES_H_
