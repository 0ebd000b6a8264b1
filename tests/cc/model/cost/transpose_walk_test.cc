// How a transposed copy walks its input and whether its lines stay cached
// (cc/model/cost/transpose_walk.h): the rows one pass reads and the bytes it
// spans decide, not the array's size.
#include <vector>

#include "ir/shape.h"
#include "model/cost/transpose_walk.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::CostConstants;
using exla::PrimitiveType;
using exla::Shape;
using exla::TransposeWalk;
using exla::WalkOfCopy;
using exla::WalkStaysCached;

TransposeWalk Walk(std::vector<int64_t> dims, std::vector<int64_t> order) {
  return WalkOfCopy(Shape::Array(PrimitiveType::kF32, dims), order);
}

// The machine the constants were measured on: a 2 MB L2, a 48 KB L1.
CostConstants Caches() {
  CostConstants c;
  c.transpose_cache_bytes = 2 << 20;
  c.transpose_lines_cache_bytes = 48 << 10;
  return c;
}

TEST(TransposeWalk, BlocksOfThinRowsSpanOneBlock) {
  // Attention's probabilities, 8 heads x 8,192 rows x 32 keys, copied keys
  // before rows: a pass reads 8,192 rows of one head, 1 MB in one piece.
  const TransposeWalk walk = Walk({8, 8192, 32}, {0, 2, 1});
  EXPECT_EQ(walk.bytes, 8 * 8192 * 32 * 4);
  EXPECT_EQ(walk.rows_in_flight, 8192);
  EXPECT_EQ(walk.span_bytes, 8192 * 32 * 4);
  EXPECT_TRUE(WalkStaysCached(walk, Caches()));
}

TEST(TransposeWalk, DimensionsOfSizeOneDoNotCount) {
  const TransposeWalk walk = Walk({1, 1, 8, 8192, 32}, {2, 4, 3});
  EXPECT_EQ(walk.rows_in_flight, 8192);
  EXPECT_EQ(walk.span_bytes, 8192 * 32 * 4);
}

TEST(TransposeWalk, ManyLongRowsMiss) {
  // 8,192 rows of 512 (16 MB): a pass spans the whole array.
  const TransposeWalk walk = Walk({8192, 512}, {1, 0});
  EXPECT_EQ(walk.span_bytes, 8192 * 512 * 4);
  EXPECT_FALSE(WalkStaysCached(walk, Caches()));
}

TEST(TransposeWalk, FewRowsStayInTheL1) {
  // 64 rows of 65,536 (16 MB): 64 lines in flight.
  const TransposeWalk walk = Walk({64, 65536}, {1, 0});
  EXPECT_EQ(walk.rows_in_flight, 64);
  EXPECT_TRUE(WalkStaysCached(walk, Caches()));
  // 1,024 rows of 4,096 (16 MB): 64 KB of lines, above the L1.
  EXPECT_FALSE(WalkStaysCached(Walk({1024, 4096}, {1, 0}), Caches()));
}

TEST(TransposeWalk, RowsSpacedApartSpanTheirDistance) {
  // 4,096 x 32 x 32 copied to 32 x 32 x 4,096: a pass reads 32 elements of
  // each row, 4 KB apart, across all 16 MB.
  const TransposeWalk walk = Walk({4096, 32, 32}, {1, 2, 0});
  EXPECT_EQ(walk.rows_in_flight, 4096);
  EXPECT_EQ(walk.span_bytes, 4096 * 32 * 32 * 4);
  EXPECT_FALSE(WalkStaysCached(walk, Caches()));
}

TEST(TransposeWalk, MinorDimensionKeptMinorReadsOneRowAtATime) {
  // Heads moved before rows, the 64 features of each still minor.
  const TransposeWalk walk = Walk({8192, 8, 64}, {1, 0, 2});
  EXPECT_EQ(walk.rows_in_flight, 1);
  EXPECT_EQ(walk.span_bytes, 64 * 4);
  EXPECT_TRUE(WalkStaysCached(walk, Caches()));
}

}  // namespace
