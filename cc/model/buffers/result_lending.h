// The temporaries XLA's buffer assignment places in the allocations of the
// entry's results.
//
// XLA assigns buffers one by one, largest first (on equal sizes, results
// of the entry before temporaries). A result gets an allocation of its own
// (it is alive to the end of the run, so it cannot join the heap of
// temporaries); a temporary first tries the allocations made so far, the
// most recent (the smallest) first, and takes the first one that
// is large enough and whose values are all dead or not yet written while
// the temporary is alive. Only a temporary that fits none of them joins
// the heap. So a value that dies before a result of at least its size is
// written shares that result's memory and costs nothing beyond the outputs.
#ifndef EXLA_MODEL_BUFFERS_RESULT_LENDING_H_
#define EXLA_MODEL_BUFFERS_RESULT_LENDING_H_

#include <cstdint>
#include <vector>

#include "model/buffers/heap_packing.h"

namespace exla {

// A buffer that buffer assignment places: a result of the entry (alive from
// `life.start` to the end of the run; `life.end` is ignored) or a
// temporary that may share a result's allocation.
struct AssignedBuffer {
  BufferLife life;
  bool result = false;
  // XLA's last tie-break among buffers of one size: the post order of the
  // instructions that define them.
  int64_t position = 0;
};

// For each of `buffers`, whether it is a temporary that XLA places in the
// allocation of a result.
// `held`: steps at which values the model does not place one by one may
// hold any result's allocation, which no temporary alive then may take.
std::vector<bool> LentResultAllocations(const std::vector<AssignedBuffer>& buffers,
                                        const std::vector<int64_t>& held = {});

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_RESULT_LENDING_H_
