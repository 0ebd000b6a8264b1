// How long each buffer lives on XLA's schedule: until its last reader.
//
// A value is read at the step of each instruction that reads it, looking
// through what fusion folds into the reader (fused_module.h); a loop reads
// its initial state when it ends; a computation's result is read when the
// computation returns. A dot whose operand XLA transposes into a copy for
// its GEMM reads the value when the copy is made, as soon as the value is
// written (fusion/dot_operand_copies.h), not at the dot.
#ifndef EXLA_MODEL_BUFFERS_LIVE_RANGES_H_
#define EXLA_MODEL_BUFFERS_LIVE_RANGES_H_

#include <cstdint>
#include <vector>

#include "model/buffers/leaf_buffers.h"
#include "model/buffers/module_schedule.h"
#include "model/fusion/fused_module.h"

namespace exla {

// The step at which each leaf of `leaves` is last read (-1: never).
std::vector<int64_t> LastUses(const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_LIVE_RANGES_H_
