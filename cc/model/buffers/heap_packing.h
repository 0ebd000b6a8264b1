// Packing buffers with known lifetimes into one heap, as XLA's buffer
// assignment does for the temporaries of a sequentially scheduled module.
//
// XLA's heap simulator places buffers by decreasing size, each at the
// smallest gap among the buffers already placed whose lifetimes overlap it
// (best fit), else above them. The heap it needs is at least the most bytes
// alive at one step and usually a little more (gaps that no later buffer
// fits).
#ifndef EXLA_MODEL_BUFFERS_HEAP_PACKING_H_
#define EXLA_MODEL_BUFFERS_HEAP_PACKING_H_

#include <cstdint>
#include <vector>

namespace exla {

// A buffer alive from step `start` to step `end`, both included.
struct BufferLife {
  int64_t bytes = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// The most bytes alive at one step: a lower bound of any packing.
int64_t PeakLiveBytes(const std::vector<BufferLife>& buffers);

// The size of the heap a decreasing-size best-fit packing needs, every
// buffer starting at a multiple of `alignment` bytes.
int64_t PackedHeapBytes(const std::vector<BufferLife>& buffers, int64_t alignment);

// XLA's CPU buffer assignment packs only array-shaped temporaries into the
// heap; the pointer table of each tuple-shaped temporary gets an
// allocation of its own, shared with no other value. It then combines the
// temporary allocations into one, each starting at a multiple of
// `alignment`: the heap first, the tables after it (the largest last).
// Returns that size.
int64_t CombinedTempBytes(int64_t heap_bytes, const std::vector<int64_t>& table_bytes, int64_t alignment);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_HEAP_PACKING_H_
