// A slice of the front of one dimension: the form in which a top-k's
// readers take its first k entries, which the model (simplify/xla_topk.h)
// and the splitter (sort_as_topk.h) both look for.
#ifndef EXLA_ANALYSIS_FRONT_SLICE_H_
#define EXLA_ANALYSIS_FRONT_SLICE_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// The k when `slice` keeps the first k entries of dimension `dim` of its
// operand and all of every other dimension, with stride 1; 0 otherwise.
int64_t FrontOfDimension(const HloInstruction& slice, int64_t dim);

}  // namespace exla

#endif  // EXLA_ANALYSIS_FRONT_SLICE_H_
