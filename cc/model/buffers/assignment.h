// XLA's buffer assignment: the figures it plans for a module.
//
// The buffers of the module's values (sets of leaves, aliasing.h and
// in_place.h) that are neither parameters, literals nor the entry's
// results are temporaries, alive from their first writer to their last
// reader (live_ranges.h). Beside them are the buffers the model adds for
// what XLA does not show as values: expansions' scratch (scratch.h),
// pointer tables (tuple_tables.h) and copies (copies.h). A temporary that
// fits in an entry result's allocation while the result is not alive
// takes it (result_lending.h); the rest pack into one heap, the tables
// beside it (heap_packing.h).
#ifndef EXLA_MODEL_BUFFERS_ASSIGNMENT_H_
#define EXLA_MODEL_BUFFERS_ASSIGNMENT_H_

#include "model/buffers/buffer_analyses.h"
#include "model/buffers/memory_model.h"

namespace exla {

// The figures of buffer assignment and the temporaries behind them.
ModuleBuffers AssignBuffers(const BufferAnalyses& analyses);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_ASSIGNMENT_H_
