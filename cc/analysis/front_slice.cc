#include "analysis/front_slice.h"

#include <vector>

namespace exla {

int64_t FrontOfDimension(const HloInstruction& slice, int64_t dim) {
  if (!slice.Is(HloOpcode::kSlice)) return 0;
  const std::vector<SliceBounds> bounds = slice.slice();
  const std::vector<int64_t>& dims = slice.operand(0)->shape().dims();
  if (bounds.size() != dims.size() || dim < 0 || dim >= static_cast<int64_t>(dims.size())) return 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (bounds[d].start != 0 || bounds[d].stride != 1) return 0;
    if (static_cast<int64_t>(d) != dim && bounds[d].limit != dims[d]) return 0;
  }
  return bounds[static_cast<size_t>(dim)].limit;
}

}  // namespace exla
