// The leaves of a shape: its arrays and tokens, nested tuples flattened, in
// order. A buffer holds one leaf; the memory model and its readers of loop
// state number a value's leaves this way.
#ifndef EXLA_ANALYSIS_SHAPE_LEAVES_H_
#define EXLA_ANALYSIS_SHAPE_LEAVES_H_

#include <cstdint>
#include <vector>

#include "ir/shape.h"

namespace exla {

// The leaves of `shape`, in order: their bytes (0 for a token), their
// shapes (pointers into `shape`), how many.
void FlattenLeaves(const Shape& shape, std::vector<int64_t>* bytes);
void FlattenLeafShapes(const Shape& shape, std::vector<const Shape*>* shapes);
int64_t LeafCount(const Shape& shape);

}  // namespace exla

#endif  // EXLA_ANALYSIS_SHAPE_LEAVES_H_
