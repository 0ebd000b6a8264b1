// Shape's guard on the dimensions it resizes (cc/ir/shape.h).
#include "ir/shape.h"

#include <stdexcept>

#include "tests/cc/test_harness.h"

namespace {

using exla::PrimitiveType;
using exla::Shape;

TEST(Shape, SetDimResizesOneDimension) {
  Shape shape = Shape::Array(PrimitiveType::kF32, {8, 4});
  shape.set_dim(0, 2);
  EXPECT_EQ(shape.ToString(), "f32[2,4]{1,0}");
}

TEST(Shape, SetDimOfATupleThrows) {
  // A top-k's values and indices: a pass that slices it as one array must
  // fail as an exception, not write past its (empty) dimensions.
  Shape tuple = Shape::Tuple({Shape::Array(PrimitiveType::kF32, {8, 4}),
                              Shape::Array(PrimitiveType::kS32, {8, 4})});
  EXPECT_THROW(tuple.set_dim(0, 2), std::out_of_range);
}

TEST(Shape, SetDimPastTheRankThrows) {
  Shape shape = Shape::Array(PrimitiveType::kF32, {8, 4});
  EXPECT_THROW(shape.set_dim(2, 1), std::out_of_range);
  EXPECT_THROW(shape.set_dim(-1, 1), std::out_of_range);
}

}  // namespace
