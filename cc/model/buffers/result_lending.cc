#include "model/buffers/result_lending.h"

#include <algorithm>
#include <numeric>

namespace exla {
namespace {

// One allocation of a result, with the lives of everything placed in it.
struct ResultAllocation {
  int64_t bytes = 0;
  std::vector<BufferLife> lives;  // a result's runs to the end
};

bool Overlap(const BufferLife& a, const BufferLife& b) { return a.start <= b.end && b.start <= a.end; }

// Whether `life` may be placed in `allocation`: it fits, and it is alive
// at no step where a value placed there is. A temporary that the result's
// writer reads is alive at the result's first step, so it does not fit
// (when the writer could write over it, the model has already made them one
// buffer).
bool Fits(const ResultAllocation& allocation, const BufferLife& life) {
  if (allocation.bytes < life.bytes) return false;
  return std::none_of(allocation.lives.begin(), allocation.lives.end(),
                      [&life](const BufferLife& placed) { return Overlap(placed, life); });
}

}  // namespace

std::vector<bool> LentResultAllocations(const std::vector<AssignedBuffer>& buffers,
                                        const std::vector<int64_t>& held) {
  // XLA's order: decreasing size, results first among equals, then post order.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&buffers](size_t a, size_t b) {
    if (buffers[a].life.bytes != buffers[b].life.bytes) return buffers[a].life.bytes > buffers[b].life.bytes;
    if (buffers[a].result != buffers[b].result) return buffers[a].result;
    return buffers[a].position < buffers[b].position;
  });
  std::vector<bool> lent(buffers.size(), false);
  std::vector<ResultAllocation> allocations;
  for (size_t i : order) {
    const AssignedBuffer& buffer = buffers[i];
    if (buffer.life.bytes <= 0) continue;
    if (buffer.result) {
      BufferLife whole = buffer.life;
      whole.end = INT64_MAX;
      allocations.push_back({buffer.life.bytes, {whole}});
      for (int64_t step : held) allocations.back().lives.push_back({0, step, step});
      continue;
    }
    // The most recent allocations first.
    for (size_t k = 0; k < allocations.size(); ++k) {
      ResultAllocation& allocation = allocations[allocations.size() - 1 - k];
      if (!Fits(allocation, buffer.life)) continue;
      allocation.lives.push_back(buffer.life);
      lent[i] = true;
      break;
    }
  }
  return lent;
}

}  // namespace exla
