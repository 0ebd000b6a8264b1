#include "model/buffers/heap_packing.h"

#include <algorithm>
#include <map>
#include <utility>

namespace exla {
namespace {

int64_t RoundUp(int64_t bytes, int64_t alignment) {
  return alignment <= 1 ? bytes : (bytes + alignment - 1) / alignment * alignment;
}

struct Placed {
  int64_t offset;
  int64_t bytes;
  int64_t start;
  int64_t end;
};

// The offset best fit gives a buffer of `bytes` among `overlapping` (sorted by
// offset): the smallest gap that holds it at an aligned offset, else the
// aligned top of the highest.
int64_t BestFit(const std::vector<const Placed*>& overlapping, int64_t bytes, int64_t alignment) {
  int64_t best = -1, best_gap = 0, cursor = 0;
  for (const Placed* p : overlapping) {
    const int64_t gap = p->offset - cursor;
    if (gap >= bytes && (best < 0 || gap < best_gap)) {
      best = cursor;
      best_gap = gap;
    }
    cursor = std::max(cursor, RoundUp(p->offset + p->bytes, alignment));
  }
  return best >= 0 ? best : cursor;
}

}  // namespace

int64_t PeakLiveBytes(const std::vector<BufferLife>& buffers) {
  std::map<int64_t, int64_t> delta;  // step -> change of live bytes
  for (const BufferLife& b : buffers) {
    delta[b.start] += b.bytes;
    delta[b.end + 1] -= b.bytes;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

namespace {

// Places `order` one by one, each at its best fit among those placed whose
// lives overlap it; returns the heap's size.
int64_t PackInOrder(const std::vector<BufferLife>& order, int64_t alignment) {
  std::vector<Placed> placed;
  placed.reserve(order.size());
  int64_t heap = 0;
  std::vector<const Placed*> overlapping;
  for (const BufferLife& b : order) {
    const int64_t bytes = b.bytes;
    if (bytes == 0) continue;
    overlapping.clear();
    for (const Placed& p : placed) {
      if (p.start <= b.end && b.start <= p.end) overlapping.push_back(&p);
    }
    std::sort(overlapping.begin(), overlapping.end(),
              [](const Placed* x, const Placed* y) { return x->offset < y->offset; });
    const int64_t offset = BestFit(overlapping, bytes, alignment);
    placed.push_back({offset, bytes, b.start, b.end});
    heap = std::max(heap, offset + bytes);
  }
  return heap;
}

}  // namespace

int64_t PackedHeapBytes(const std::vector<BufferLife>& buffers, int64_t alignment) {
  // XLA's heap simulator packs twice, largest first (spatial) and
  // longest-lived first (temporal), and keeps the smaller heap.
  std::vector<BufferLife> spatial = buffers;
  std::stable_sort(spatial.begin(), spatial.end(), [](const BufferLife& a, const BufferLife& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.end - a.start != b.end - b.start) return a.end - a.start > b.end - b.start;
    return a.start < b.start;
  });
  std::vector<BufferLife> temporal = buffers;
  std::stable_sort(temporal.begin(), temporal.end(), [](const BufferLife& a, const BufferLife& b) {
    if (a.end - a.start != b.end - b.start) return a.end - a.start > b.end - b.start;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.start < b.start;
  });
  return std::min(PackInOrder(spatial, alignment), PackInOrder(temporal, alignment));
}

int64_t CombinedTempBytes(int64_t heap_bytes, const std::vector<int64_t>& table_bytes, int64_t alignment) {
  // The order of the tables is XLA's order of allocation, which the model
  // does not know: it takes the largest last (the one not padded).
  std::vector<int64_t> tables = table_bytes;
  std::sort(tables.begin(), tables.end());
  int64_t total = heap_bytes;
  for (int64_t bytes : tables) {
    if (bytes > 0) total = (total > 0 ? RoundUp(total, alignment) : 0) + bytes;
  }
  return total;
}

}  // namespace exla
