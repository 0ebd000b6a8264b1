#include "analysis/shape_leaves.h"

namespace exla {

void FlattenLeaves(const Shape& shape, std::vector<int64_t>* bytes) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) FlattenLeaves(element, bytes);
    return;
  }
  bytes->push_back(shape.IsArray() ? shape.ByteSize() : 0);
}

void FlattenLeafShapes(const Shape& shape, std::vector<const Shape*>* shapes) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) FlattenLeafShapes(element, shapes);
    return;
  }
  shapes->push_back(&shape);
}

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += LeafCount(element);
  return count;
}

}  // namespace exla
