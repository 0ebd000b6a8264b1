// What XLA's blocked expansion of a Cholesky factorisation of more than 128
// columns holds (cc/model/expand/cholesky.h): 128-column block columns,
// each factored by an unblocked loop, the rows below solved against it; and
// what that one unblocked loop holds for at most 128 columns.
// Each figure was checked against XLA CPU's buffer assignment
// (exla.bridge.xla.planned_memory).
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::PredictMemory;

// Replaces each '#' of `text` with `shape`, each '@' with `lower`.
std::string Fill(std::string text, const std::string& shape, const std::string& lower) {
  for (size_t at = text.find('#'); at != std::string::npos; at = text.find('#', at)) text.replace(at, 1, shape);
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) text.replace(at, 1, lower);
  return text;
}

// The factor of a parameter, the entry's result.
std::string OfParameter(const std::string& shape, const std::string& lower) {
  return Fill(R"(HloModule m

ENTRY e {
  x = # parameter(0)
  ROOT c = # cholesky(x), lower=@
})",
              shape, lower);
}

// The factor of exp(x), which only the factorisation reads.
std::string OfExponential(const std::string& shape, const std::string& lower) {
  return Fill(R"(HloModule m

ENTRY e {
  x = # parameter(0)
  a = # exponential(x)
  ROOT c = # cholesky(a), lower=@
})",
              shape, lower);
}

TEST(CholeskyModel, FirstBlockLoopHoldsThreeBlocksAndTheSolvesBlocks) {
  // 129 columns: a block column of 128, then one of a single column (a
  // square root, no loop). While the first block's loop runs, the heap
  // holds its zero factor L, L L^T (65536 bytes each), the accumulator of
  // inverses of the solve of the last row (65536), computed first, the
  // pred[128,128] mask and the last row of the panel; the block being
  // factored sits in the result's buffer. XLA: 213416 bytes.
  EXPECT_EQ(PredictMemory(OfParameter("f32[129,129]{1,0}", "true")).temp_bytes, 213736);
}

TEST(CholeskyModel, LargeBatchedLoopWritesItsDifferenceApart) {
  // Three matrices: the loop's A - L L^T reads and writes 576 KiB, so XLA
  // outlines it for threads, and it writes a buffer of its own beside
  // L L^T: four arrays of 3 x 128 x 128 and the mask. XLA: 837480 bytes.
  EXPECT_EQ(PredictMemory(OfParameter("f32[3,129,129]{2,1,0}", "true")).temp_bytes, 837352);
}

TEST(CholeskyModel, SolveBesideAnUpperFactorCanHoldThePeak) {
  // 200 columns, upper: once the first loop has run, XLA builds the lower
  // factor l (160000 bytes) beside the result, and the solve of the 72
  // rows below the first block inverts the block with the accumulator, the
  // scaled block, the rows and the second block's zero factor and mask
  // waiting: more than the first loop (before l) or the second block
  // column hold. XLA: 356840 bytes (the model is 4% high).
  EXPECT_EQ(PredictMemory(OfParameter("f32[200,200]{1,0}", "false")).temp_bytes, 370472);
}

TEST(CholeskyModel, UpdateOfALaterBlockColumnCanHoldThePeak) {
  // 640 columns: five block columns. The second one's update multiplies
  // the 512 rows of l below the first block by the block's 128 rows of l
  // (slices of l, 262144 and 65536 bytes, and their product, 262144) while
  // the zero factors of the four later blocks and the accumulators of
  // three solves wait: more than the first loop holds (the 512 rows below
  // it and one 128 x 128 product). XLA: 1131816 bytes (its heap packs
  // these blocks with 6% of holes).
  EXPECT_EQ(PredictMemory(OfParameter("f32[640,640]{1,0}", "true")).temp_bytes, 1065192);
}

TEST(CholeskyModel, UpperFactorOfParameterHoldsTheLowerFactorBeside) {
  // An upper factor is the transpose of the lower factor of the transposed
  // matrix: XLA builds the lower factor l as a temporary (262144 bytes)
  // and transposes it into the result at the end. XLA: 543656 bytes, where
  // the lower factor of the same matrix takes 347048.
  EXPECT_EQ(PredictMemory(OfParameter("f32[256,256]{1,0}", "false")).temp_bytes, 540904);
  EXPECT_EQ(PredictMemory(OfParameter("f32[256,256]{1,0}", "true")).temp_bytes, 344296);
}

TEST(CholeskyModel, UpperFactorOfComputedMatrixTransposesItIntoTheResult) {
  // exp(x) is computed transposed and dies within the expansion: it takes
  // the result's buffer, and l is the temporary the model counts as the
  // operand. Upper and lower hold the same. XLA: 1133288 and 1133800 bytes.
  EXPECT_EQ(PredictMemory(OfExponential("f32[384,384]{1,0}", "false")).temp_bytes, 1130728);
  EXPECT_EQ(PredictMemory(OfExponential("f32[384,384]{1,0}", "true")).temp_bytes, 1130728);
}

TEST(CholeskyModel, UnblockedLowerFactorIsBuiltInTheResult) {
  // 60 columns, one unblocked loop: beside the factor l it holds L L^T
  // (28800 bytes), the pred[60,60] mask and small values. l is selected
  // elementwise into a lower result and shares its buffer: one matrix of
  // scratch, not two. XLA: 32705 bytes (of a parameter), 61505 (of
  // exp(x), which stays alive through the loop).
  EXPECT_EQ(PredictMemory(OfParameter("f64[60,60]{1,0}", "true")).temp_bytes, 32680);
  EXPECT_EQ(PredictMemory(OfExponential("f64[60,60]{1,0}", "true")).temp_bytes, 61480);
}

TEST(CholeskyModel, UnblockedUpperFactorHoldsTheFactorBeside) {
  // An upper result is the transpose of l, which cannot share its buffer:
  // l and L L^T beside the result. XLA: 61505 bytes.
  EXPECT_EQ(PredictMemory(OfParameter("f64[60,60]{1,0}", "false")).temp_bytes, 61480);
}

}  // namespace
