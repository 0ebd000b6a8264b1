// What XLA's expansion of a triangular solve holds
// (cc/model/expand/triangular_solve.h): arrays of the diagonal blocks of
// the matrix, 128 rows a block, the last one padded to a whole block.
// Each figure was checked against XLA CPU's buffer assignment
// (exla.bridge.xla.planned_memory).
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::PredictMemory;

// A solve against exp(x) for x of n x n f32, with 8 right-hand sides; the
// result negated.
std::string SolveOfSize(int n) {
  std::string text = R"(HloModule m

ENTRY e {
  x = f32[#,#]{1,0} parameter(0)
  b = f32[#,8]{1,0} parameter(1)
  a = f32[#,#]{1,0} exponential(x)
  s = f32[#,8]{1,0} triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT r = f32[#,8]{1,0} negate(s)
})";
  for (size_t at = text.find('#'); at != std::string::npos; at = text.find('#', at)) {
    text.replace(at, 1, std::to_string(n));
  }
  return text;
}

TEST(TriangularSolveModel, OneBlockIsHeldTwiceBesideTheMatrix) {
  // 60 rows make one block of 60: while the loop inverts it, the heap
  // holds the matrix (14400 bytes), the accumulator of inverses computed
  // first (14400), the scaled block being inverted (14400), its diagonal
  // (240) and the loop's small values; the result, negated in place, is
  // the output's. XLA: 43544 bytes.
  EXPECT_EQ(PredictMemory(SolveOfSize(60)).temp_bytes, 43608);
}

TEST(TriangularSolveModel, OneRowPastTheBlockSizePadsASecondBlock) {
  // 128 rows are one block (XLA: 197208 bytes); 129 rows are two blocks
  // of 128, the second padded with the identity, and every array of blocks
  // doubles (two 128 x 128 x 4 blocks: 131072 bytes). The blocks gathered
  // out of the matrix are alive beside the scaled ones: three arrays of
  // blocks and the matrix. (XLA: 399000 bytes; the model is 16% high.)
  EXPECT_EQ(PredictMemory(SolveOfSize(128)).temp_bytes, 197272);
  EXPECT_EQ(PredictMemory(SolveOfSize(129)).temp_bytes, 461016);
}

TEST(TriangularSolveModel, ShortRowsScaleTheMatrixInPlace) {
  // Five 4 x 4 matrices: rows short enough to sum in one pass, so the
  // masked diagonal fuses into its reduce, and the scaled blocks take the
  // buffer of the matrix, which only the solve reads. The loop holds the
  // accumulator (320 bytes), the scaled blocks (320), the diagonal (80)
  // and a row of the inverse and its product (80 each). XLA: 1048 bytes.
  const std::string text = R"(HloModule m

ENTRY e {
  x = f32[5,4,4]{2,1,0} parameter(0)
  b = f32[5,4,1]{2,1,0} parameter(1)
  a = f32[5,4,4]{2,1,0} exponential(x)
  s = f32[5,4,1]{2,1,0} triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT r = f32[5,4,1]{2,1,0} negate(s)
})";
  EXPECT_EQ(PredictMemory(text).temp_bytes, 1048);
}

}  // namespace
