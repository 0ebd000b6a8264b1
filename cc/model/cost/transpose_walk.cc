#include "model/cost/transpose_walk.h"

#include <algorithm>

namespace exla {
namespace {

constexpr int64_t kLineBytes = 64;  // a cache line on x86 and on Arm's cores

}  // namespace

TransposeWalk WalkOfCopy(const Shape& array, const std::vector<int64_t>& order) {
  TransposeWalk walk;
  walk.bytes = array.IsArray() ? array.ByteSize() : 0;
  const int64_t elements = array.ElementCount();
  if (walk.bytes == 0 || elements == 0) return walk;
  const int64_t element_bytes = walk.bytes / elements;
  // The input's minor dimension (of size above 1) and where the copy puts it.
  int minor = array.rank() - 1;
  while (minor > 0 && array.dim(minor) == 1) --minor;
  const auto at = std::find(order.begin(), order.end(), minor);
  walk.span_bytes = array.dim(minor) * element_bytes;
  if (at == order.end()) return walk;
  for (auto d = at + 1; d != order.end(); ++d) {
    if (*d < 0 || *d >= array.rank()) continue;
    const int dim = static_cast<int>(*d);
    int64_t stride = element_bytes;
    for (int inner = dim + 1; inner < array.rank(); ++inner) stride *= array.dim(inner);
    walk.rows_in_flight *= array.dim(dim);
    walk.span_bytes = std::max(walk.span_bytes, stride * array.dim(dim));
  }
  return walk;
}

bool WalkStaysCached(const TransposeWalk& walk, const CostConstants& c) {
  return static_cast<double>(walk.span_bytes) <= c.transpose_cache_bytes / 2 ||
         static_cast<double>(walk.rows_in_flight * kLineBytes) <= c.transpose_lines_cache_bytes / 2;
}

double TransposeSeconds(const TransposeWalk& walk, const CostConstants& c) {
  const double rate = WalkStaysCached(walk, c) ? c.transpose_cached_bytes_per_second
                                               : c.transpose_bytes_per_second;
  return 2.0 * static_cast<double>(walk.bytes) / rate + c.op_seconds;
}

}  // namespace exla
