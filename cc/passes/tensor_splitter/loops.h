// Rewriting a split region (cc/passes/tensor_splitter/region.h) as `while` loops.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_
#define EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "passes/tensor_splitter/region.h"

namespace exla {

// Replaces the region by loops over chunks of `chunk` elements of the split
// dimension (a one-trip loop for the remainder runs first, over the first
// units). Returns the loop body computations it created.
std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_
