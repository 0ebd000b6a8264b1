// Rewriting a split region (cc/passes/split_region.h) as `while` loops.
#ifndef EXLA_PASSES_SPLIT_LOOPS_H_
#define EXLA_PASSES_SPLIT_LOOPS_H_

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "passes/split_region.h"

namespace exla {

// Replaces the region by loops over chunks of `chunk` elements of the split
// dimension (a second, one-trip loop for the remainder). Returns the loop
// body computations it created.
std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk);

}  // namespace exla

#endif  // EXLA_PASSES_SPLIT_LOOPS_H_
