// Rewriting a split region (cc/passes/tensor_splitter/region.h) as `while` loops.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_
#define EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "passes/tensor_splitter/region.h"

namespace exla {

// `shape` with `chunk` elements along `dim`: in each element of a tuple (a
// sort's or a top-k's rows), or in the array.
Shape SliceShape(const Shape& shape, int64_t dim, int64_t chunk);

// Replaces the region by loops over chunks of `chunk` elements of the split
// dimension (a one-trip loop for the remainder runs first, over the first
// units). Returns the loop body computations it created. A region that
// accumulates a sum larger than its threshold computes its first chunk
// before the loop, after the splitter's previous loop in the computation
// where the two are independent; `notes` (if given) says which it waits
// for, or why it does not.
std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk,
                                                  std::vector<std::string>* notes = nullptr);

// The loops over `size` units in chunks of `chunk` that `loops` builds (a
// builder with InitialState() and Loop(state, chunk, trips, first unit):
// the region's, or a softmax's statistics'), returning the last loop.
//
// The remainder's one trip runs first, over the first `size % chunk`
// units, and the main loop starts from its state. XLA replaces a loop of
// one trip by its body, and the part of that body that reads only the
// inputs is then ready at once: after the main loop, XLA's breadth-first
// schedule would still run it first and hold its slices across the main
// loop (two of SGPR's M x N/10 slices at N = 278,319: 0.9 of 4.7 GB).
template <typename Builder>
HloInstruction* LoopsOverChunks(Builder& loops, int64_t size, int64_t chunk) {
  const int64_t remainder = size % chunk;
  HloInstruction* state = loops.InitialState();
  if (remainder != 0) state = loops.Loop(state, remainder, 1, 0);
  return loops.Loop(state, chunk, size / chunk, remainder);
}

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_LOOPS_H_
