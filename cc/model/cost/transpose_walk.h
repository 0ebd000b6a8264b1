// How XLA CPU's transposed copy of an array walks its input, and whether
// the walk keeps the lines it reads cached until it reads them again.
//
// The copy writes its output in the output's own row-major order. Each step
// along the output's minor dimensions (those after the one that is the
// input's minor dimension) reads a different input row, one element of a
// 64-byte line; the line's other elements are read on the next passes,
// once the walk has crossed all those rows again. The copy runs at cache
// speed if the lines survive until then: when the input bytes one pass
// spans fit the private (L2) cache, or when the rows one pass reads are few
// enough for their lines to stay in the L1. Otherwise every element misses.
// Measured on XLA CPU (jaxlib 0.7.1, 16 MB f32 arrays, `calibrate_cost
// --only transpose`): 64 rows of 65,536 copied at 8.5 GB/s, 8,192 rows of
// 512 at 0.9 GB/s; 8 blocks of 8,192 x 32 (1 MB each, contiguous) at 6.1.
#ifndef EXLA_MODEL_COST_TRANSPOSE_WALK_H_
#define EXLA_MODEL_COST_TRANSPOSE_WALK_H_

#include <cstdint>
#include <vector>

#include "ir/shape.h"
#include "model/cost/cost_constants.h"

namespace exla {

struct TransposeWalk {
  int64_t bytes = 0;           // the array copied, read once and written once
  int64_t span_bytes = 0;      // the input bytes one pass over the rows crosses
  int64_t rows_in_flight = 1;  // input rows (so lines) one pass reads
};

// The walk of a copy of the row-major `array` into the order `order` (the
// array's dimensions as the copy stores them, major first; dimensions of
// size 1 may be left out).
TransposeWalk WalkOfCopy(const Shape& array, const std::vector<int64_t>& order);

// Whether `walk` reads its lines again before they leave the cache: its
// span fits half the L2 or its rows' lines half the L1 (the walk's writes
// take the other half).
bool WalkStaysCached(const TransposeWalk& walk, const CostConstants& constants);

// The seconds of the copy `walk`: a kernel reading and writing its bytes at
// the cached rate or at the miss rate.
double TransposeSeconds(const TransposeWalk& walk, const CostConstants& constants);

}  // namespace exla

#endif  // EXLA_MODEL_COST_TRANSPOSE_WALK_H_
