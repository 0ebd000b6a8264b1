// The cost model (PredictTime, model/xla_cpu_model.h): kernels costed as a roofline of
// their flops and bytes, loops by their trip count. The constants are set by
// each test, so that every expected figure can be worked out by hand; the
// calibrated ones are compared with XLA by experiments/cost_rank.py.
#include <cmath>
#include <memory>
#include <string>

#include "ir/module.h"
#include "ir/parser.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::CostConstants;
using exla::PredictTime;
using exla::TimePrediction;

// Round figures: 1 GFLOP/s everywhere (thin products too), 1 GB/s, no
// overheads, no cache.
CostConstants Plain() {
  CostConstants c;
  c.dot_f32_flops_per_second = 1e9;
  c.dot_f64_flops_per_second = 1e9;
  c.dot_thin_width = 0;
  c.elementwise_per_second = 1e9;
  c.transcendental_per_second = 1e9;
  c.sort_comparisons_per_second = 1e9;
  c.topk_elements_per_second = 1e9;
  c.bytes_per_second = 1e9;
  c.op_seconds = 0;
  c.trip_seconds = 0;
  c.cache_bytes = 0;
  c.cache_bytes_per_second = 1e9;
  return c;
}

// Plain(), with a last-level cache of `bytes` ten times faster than memory
// and matrix products fast enough for memory traffic to decide.
CostConstants Cached(double bytes) {
  CostConstants c = Plain();
  c.dot_f32_flops_per_second = 1e13;
  c.cache_bytes = bytes;
  c.cache_bytes_per_second = 1e10;
  return c;
}

TimePrediction Predict(const std::string& text, const CostConstants& constants = Plain()) {
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  return PredictTime(*module, constants);
}

// Replaces every `@KEY@` of `text` with `value`.
std::string Fill(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

TEST(CostModel, DotIsCostedByItsFlops) {
  CostConstants c = Plain();
  c.dot_f32_flops_per_second = 1e10;
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  a = f32[512,512]{1,0} parameter(0)
  b = f32[512,512]{1,0} parameter(1)
  ROOT d = f32[512,512]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)", c);
  EXPECT_EQ(p.flops, 2LL * 512 * 512 * 512);
  EXPECT_EQ(p.dot_flops, p.flops);
  EXPECT_EQ(p.bytes, 3LL * 512 * 512 * 4);  // two operands read, the result written
  // 26.8 ms of arithmetic against 3.1 ms of memory traffic: the flops decide.
  EXPECT_EQ(p.seconds, static_cast<double>(p.flops) / 1e10);
}

// Plain() with a dot rate for which the flops decide, and a GEMM that is at
// full rate from a narrowest side of 64 and at (side / 64)^0.5 below it.
CostConstants Thin() {
  CostConstants c = Plain();
  c.dot_f32_flops_per_second = 1e10;
  c.dot_thin_width = 64;
  c.dot_thin_exponent = 0.5;
  return c;
}

const char kDotOfShapes[] = R"(HloModule m

ENTRY e {
  a = f32[@LHS@]{1,0} parameter(0)
  b = f32[@RHS@]{1,0} parameter(1)
  ROOT d = f32[@OUT@]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TimePrediction PredictDot(const std::string& lhs, const std::string& rhs, const std::string& out,
                          const CostConstants& constants = Thin()) {
  const std::string text = Fill(Fill(Fill(kDotOfShapes, "@LHS@", lhs), "@RHS@", rhs), "@OUT@", out);
  return Predict(text, constants);
}

TEST(CostModel, ProductWithFewRowsRunsBelowTheFullRate) {
  const TimePrediction p = PredictDot("16,512", "512,512", "16,512");
  // (16 / 64)^0.5 = 1/2 of the full rate.
  EXPECT_EQ(p.seconds, 2.0 * static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, ProductWithAShallowContractionRunsBelowTheFullRate) {
  const TimePrediction p = PredictDot("512,16", "16,512", "512,512");
  // Half the full rate: 1.68 ms of arithmetic against 1.11 ms of memory traffic.
  EXPECT_EQ(p.seconds, 2.0 * static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, ProductWithFewColumnsRunsBelowTheFullRate) {
  const TimePrediction p = PredictDot("512,512", "512,16", "512,16");
  // Half the full rate: 1.68 ms of arithmetic against 1.11 ms of memory traffic.
  EXPECT_EQ(p.seconds, 2.0 * static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, OnlyTheNarrowestSideOfAProductThinInTwoCounts) {
  // Rows of 16 and depth of 4: (4 / 64)^0.5 = 1/4, not that times (16 / 64)^0.5.
  CostConstants c = Thin();
  c.bytes_per_second = 1e12;  // so that the arithmetic decides
  const TimePrediction p = PredictDot("16,4", "4,4096", "16,4096", c);
  EXPECT_EQ(p.seconds, 4.0 * static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, ProductAtLeastAsWideAsTheWidthRunsAtTheFullRate) {
  const TimePrediction p = PredictDot("64,512", "512,512", "64,512");
  EXPECT_EQ(p.seconds, static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, MatrixVectorProductIsNotAThinProduct) {
  // 64 x 512 by one column: XLA's own loop, not a GEMM at 1/8 of its rate.
  CostConstants c = Thin();
  c.bytes_per_second = 1e12;  // so that the arithmetic decides
  const TimePrediction p = PredictDot("64,512", "512,1", "64,1", c);
  EXPECT_EQ(p.seconds, static_cast<double>(p.flops) / 1e10);
}

TEST(CostModel, EmptyProductCostsNoArithmetic) {
  const TimePrediction p = PredictDot("0,512", "512,512", "0,512");
  EXPECT_EQ(p.flops, 0);
  EXPECT_EQ(p.seconds, static_cast<double>(p.bytes) / 1e9);
}

TEST(CostModel, BatchDimensionsDoNotMakeAProductThin) {
  // 4 products of 64 x 64 x 64: the batch of 4 is not a side of any of them.
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  a = f32[4,64,64]{2,1,0} parameter(0)
  b = f32[4,64,64]{2,1,0} parameter(1)
  ROOT d = f32[4,64,64]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)", Thin());
  EXPECT_EQ(p.seconds, static_cast<double>(p.flops) / 1e10);
}

// A product of f32[32,32,64] contracting @ROWS@ rows of its left operand.
// Stored rows first (@LHS@ = "@ROWS@,32,32", @CONTRACTED@ = 0), the operand
// has two free dimensions after its contracting one: not in the GEMM's
// order, so XLA CPU copies it transposed; stored rows last ("32,32,@ROWS@",
// 2), the same product reads it as it is.
const char kProductOfRows[] = R"(HloModule m

ENTRY e {
  a = f32[@LHS@]{2,1,0} parameter(0)
  b = f32[@ROWS@,64]{1,0} parameter(1)
  ROOT d = f32[32,32,64]{2,1,0} dot(a, b), lhs_contracting_dims={@CONTRACTED@}, rhs_contracting_dims={0}
}
)";

// Plain(), with caches for transposes (transpose_walk.h): a 1 MB L2 and a
// 32 KB L1; 10 GB/s while the lines stay cached, 0.1 GB/s when they miss.
CostConstants Transposing() {
  CostConstants c = Plain();
  c.transpose_cache_bytes = 1 << 20;
  c.transpose_lines_cache_bytes = 32 << 10;
  c.transpose_cached_bytes_per_second = 1e10;
  c.transpose_bytes_per_second = 1e8;
  return c;
}

TimePrediction PredictProductOfRows(int rows, bool transposed) {
  const std::string n = std::to_string(rows);
  std::string text = Fill(kProductOfRows, "@LHS@", transposed ? "@ROWS@,32,32" : "32,32,@ROWS@");
  text = Fill(Fill(text, "@ROWS@", n), "@CONTRACTED@", transposed ? "0" : "2");
  return Predict(text, Transposing());
}

TEST(CostModel, TransposedOperandAboveTheCacheIsCopiedAtTheMissRate) {
  // 512 x 32 x 32 f32 (2 MB): the copy's pass reads 32 elements of each
  // of 512 rows, 4 KB apart: it spans 2 MB, above half the L2, and its
  // lines (32 KB) do not fit half the L1. It reads and writes the array at
  // 0.1 GB/s, one more kernel beside the product's.
  const TimePrediction canonical = PredictProductOfRows(512, false);
  const TimePrediction transposed = PredictProductOfRows(512, true);
  const double bytes = 512.0 * 32 * 32 * 4;
  EXPECT_EQ(transposed.kernels, canonical.kernels + 1);
  EXPECT_LT(std::abs(transposed.seconds - canonical.seconds - 2 * bytes / 1e8), 1e-12);
}

TEST(CostModel, TransposedOperandWithinTheCacheIsCopiedAtTheCachedRate) {
  // 128 x 32 x 32 f32: a pass spans 512 KB, half the L2: 10 GB/s.
  const TimePrediction canonical = PredictProductOfRows(128, false);
  const TimePrediction transposed = PredictProductOfRows(128, true);
  EXPECT_LT(std::abs(transposed.seconds - canonical.seconds - 2 * 128.0 * 32 * 32 * 4 / 1e10), 1e-12);
}

// The seconds the copy of the left operand `lhs` (f32, contracted over
// `contracting`, batched over `batch`) adds to its product with an operand of
// 64 columns, under Transposing(): the product with the copy less the
// product reading the same array stored in the GEMM's order `canonical`.
double CopySeconds(const std::string& lhs, const std::string& canonical, const std::string& rhs,
                   const std::string& out, const std::string& dims, const std::string& canonical_dims) {
  const char kProduct[] = R"(HloModule m

ENTRY e {
  a = f32[@LHS@] parameter(0)
  b = f32[@RHS@] parameter(1)
  ROOT d = f32[@OUT@] dot(a, b), @DIMS@
}
)";
  std::string text = Fill(Fill(kProduct, "@RHS@", rhs), "@OUT@", out);
  const double copied = Predict(Fill(Fill(text, "@LHS@", lhs), "@DIMS@", dims), Transposing()).seconds;
  const double plain =
      Predict(Fill(Fill(text, "@LHS@", canonical), "@DIMS@", canonical_dims), Transposing()).seconds;
  return copied - plain;
}

TEST(CostModel, TransposedBlocksOfThinRowsWithinTheCacheAreCopiedAtTheCachedRate) {
  // 8 blocks of 4,096 rows x 32 (4 MB, above the 1 MB L2; attention's
  // probability slices): each pass reads one 512 KB block, whose lines stay
  // in the L2 however many rows it crosses: 10 GB/s, not the miss rate.
  const double seconds = CopySeconds(
      "8,4096,2,16", "8,2,16,4096", "8,4096,64", "8,2,16,64",
      "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
      "lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}");
  EXPECT_LT(std::abs(seconds - 2 * 8.0 * 4096 * 32 * 4 / 1e10), 1e-12);
}

TEST(CostModel, TransposedFewLongRowsAreCopiedAtTheCachedRate) {
  // 64 rows of 128 x 128 (4 MB): a pass spans the array but reads only 64
  // lines, which stay in the L1: 10 GB/s.
  const double seconds = CopySeconds("64,128,128", "128,128,64", "64,64", "128,128,64",
                                     "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                                     "lhs_contracting_dims={2}, rhs_contracting_dims={0}");
  EXPECT_LT(std::abs(seconds - 2 * 64.0 * 128 * 128 * 4 / 1e10), 1e-12);
}

TEST(CostModel, TwoProductsReadingOneOperandTransposedShareOneCopy) {
  // XLA's CSE merges the copies of one buffer in one order.
  CostConstants c = Transposing();
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  a = f32[512,32,32]{2,1,0} parameter(0)
  b = f32[512,64]{1,0} parameter(1)
  c = f32[512,64]{1,0} parameter(2)
  d = f32[32,32,64]{2,1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  e = f32[32,32,64]{2,1,0} dot(a, c), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[32,32,64]{2,1,0}, f32[32,32,64]{2,1,0}) tuple(d, e)
}
)", c);
  EXPECT_EQ(p.kernels, 3);  // two products, one copy (the tuple has no kernel)
}

TEST(CostModel, AddIsCostedByItsBytes) {
  CostConstants c = Plain();
  c.elementwise_per_second = 1e10;
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  a = f32[1048576]{0} parameter(0)
  b = f32[1048576]{0} parameter(1)
  ROOT s = f32[1048576]{0} add(a, b)
}
)", c);
  EXPECT_EQ(p.flops, 1048576);
  EXPECT_EQ(p.bytes, 3LL * 1048576 * 4);
  EXPECT_EQ(p.seconds, static_cast<double>(p.bytes) / 1e9);
}

TEST(CostModel, SortIsCostedByItsComparisons) {
  // 64 rows of 1,024 (key, index) pairs: 1,024 x 10 comparisons a row, each
  // a call of the comparator, whatever the comparator computes.
  CostConstants c = Plain();
  c.sort_comparisons_per_second = 1e7;
  const TimePrediction p = Predict(R"(HloModule m

order {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT less = pred[] compare(a, b), direction=LT
}

ENTRY e {
  x = f32[64,1024]{1,0} parameter(0)
  n = s32[64,1024]{1,0} parameter(1)
  ROOT s = (f32[64,1024]{1,0}, s32[64,1024]{1,0}) sort(x, n), dimensions={1}, to_apply=order
}
)", c);
  EXPECT_EQ(p.kernels, 1);
  // 0.066 s of comparisons against 1 ms of memory traffic.
  EXPECT_EQ(p.seconds, 64.0 * 1024 * 10 / 1e7);
}

TEST(CostModel, TopKIsCostedByTheElementsItSelectsFrom) {
  // A pass over each row keeping the 8 largest: the rows' length, not k or
  // a sort of the row, sets the time.
  CostConstants c = Plain();
  c.topk_elements_per_second = 1e7;
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  x = f32[16,65536]{1,0} parameter(0)
  ROOT t = (f32[16,8]{1,0}, s32[16,8]{1,0}) topk(x), k=8, largest=true
}
)", c);
  EXPECT_EQ(p.seconds, 16.0 * 65536 / 1e7);
}

// A 512 x 1,000 block written into a 512 x @MINOR@ f32 array of layout
// @LAYOUT@ at a dynamic offset along @ALONG@.
const char kBlockUpdate[] = R"(HloModule m

ENTRY e {
  into = f32[@ROWS@,@MINOR@]{@LAYOUT@} parameter(0)
  block = f32[@BLOCK@]{@LAYOUT@} parameter(1)
  at = s32[] parameter(2)
  zero = s32[] constant(0)
  ROOT put = f32[@ROWS@,@MINOR@]{@LAYOUT@} dynamic-update-slice(into, block, @OFFSETS@)
}
)";

TimePrediction PredictBlockUpdate(const std::string& rows, const std::string& minor,
                                  const std::string& block, const std::string& offsets,
                                  const std::string& layout) {
  CostConstants c = Plain();
  c.update_scan_elements_per_second = 1e7;
  std::string text = Fill(kBlockUpdate, "@ROWS@", rows);
  text = Fill(Fill(text, "@MINOR@", minor), "@BLOCK@", block);
  return Predict(Fill(Fill(text, "@OFFSETS@", offsets), "@LAYOUT@", layout), c);
}

TEST(CostModel, UpdateOfAColumnBlockPaysForTheRowsItCrosses) {
  // XLA CPU tests every element of the 512 rows the block crosses: 512 x
  // 15,000 visited outside the block, at 1e7 a second, against 4 MB of
  // traffic (the block read and written) at 1 GB/s.
  const TimePrediction p = PredictBlockUpdate("512", "16000", "512,1000", "zero, at", "1,0");
  EXPECT_EQ(p.seconds, 512.0 * 15000 / 1e7);
}

TEST(CostModel, UpdateOfARowBlockVisitsOnlyItsBlock) {
  // A block as wide as the rows: the emitter skips the other rows whole.
  const TimePrediction p = PredictBlockUpdate("512", "16000", "32,16000", "at, zero", "1,0");
  EXPECT_LT(p.seconds, 0.01);
  EXPECT_EQ(p.bytes, 2 * 32 * 16000 * 4 + 4 + 4);
}

TEST(CostModel, UpdateScanFollowsTheLayout) {
  // The same column block in a column-major array is contiguous: dimension
  // 0 is minor there, and the block spans it.
  const TimePrediction p = PredictBlockUpdate("512", "16000", "512,1000", "zero, at", "0,1");
  EXPECT_LT(p.seconds, 0.01);
}

TEST(CostModel, SortReadOnlyAtItsFrontIsCostedAsTheTopKXlaRuns) {
  // TensorFlow's top_k: an f32 sort whose results are only sliced to their
  // first 8. XLA CPU runs it as its top-k kernel, so it costs the elements
  // of the keys, as the topk op above does, and no comparisons.
  CostConstants c = Plain();
  c.topk_elements_per_second = 1e7;
  c.sort_comparisons_per_second = 1e3;  // a sort's cost would dwarf the answer
  const TimePrediction p = Predict(R"(HloModule m

greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT g = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = f32[16,65536]{1,0} parameter(0)
  i = s32[16,65536]{1,0} iota(), iota_dimension=1
  s = (f32[16,65536]{1,0}, s32[16,65536]{1,0}) sort(x, i), dimensions={1}, to_apply=greater
  v = f32[16,65536]{1,0} get-tuple-element(s), index=0
  ix = s32[16,65536]{1,0} get-tuple-element(s), index=1
  sv = f32[16,8]{1,0} slice(v), slice={[0:16], [0:8]}
  si = s32[16,8]{1,0} slice(ix), slice={[0:16], [0:8]}
  ROOT t = (f32[16,8]{1,0}, s32[16,8]{1,0}) tuple(sv, si)
}
)", c);
  // The iota and the slices add microseconds; a sort would add hours.
  EXPECT_GE(p.seconds, 16.0 * 65536 / 1e7);
  EXPECT_LT(p.seconds, 1.05 * 16.0 * 65536 / 1e7);
}

TEST(CostModel, FusedChainIsOneKernelThatReadsAndWritesOnce) {
  // negate and add fold into the exponential's loop: x is read once, only
  // the result is written, and the exponential runs at its own rate.
  CostConstants c = Plain();
  c.transcendental_per_second = 1e8;
  const TimePrediction p = Predict(R"(HloModule m

ENTRY e {
  x = f32[1024]{0} parameter(0)
  n = f32[1024]{0} negate(x)
  a = f32[1024]{0} add(n, x)
  ROOT r = f32[1024]{0} exponential(a)
}
)", c);
  EXPECT_EQ(p.kernels, 1);
  EXPECT_EQ(p.bytes, 2 * 1024 * 4);
  EXPECT_EQ(p.transcendentals, 1024);
  EXPECT_EQ(p.seconds, 2 * 1024 / 1e9 + 1024 / 1e8);
}

// exp(x) for x of 64 x 1024, one row per trip, for @T@ trips.
constexpr char kRowLoop[] = R"(HloModule m

body {
  state = (s32[], f32[64,1024]{1,0}, f32[64,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  x = f32[64,1024]{1,0} get-tuple-element(state), index=1
  out = f32[64,1024]{1,0} get-tuple-element(state), index=2
  zero = s32[] constant(0)
  row = f32[1,1024]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={1,1024}
  e = f32[1,1024]{1,0} exponential(row)
  put = f32[64,1024]{1,0} dynamic-update-slice(out, e, i, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[64,1024]{1,0}, f32[64,1024]{1,0}) tuple(next, x, put)
}

cond {
  state = (s32[], f32[64,1024]{1,0}, f32[64,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(@T@)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[64,1024]{1,0} parameter(0)
  zero = s32[] constant(0)
  f = f32[] constant(0)
  out = f32[64,1024]{1,0} broadcast(f), dimensions={}
  init = (s32[], f32[64,1024]{1,0}, f32[64,1024]{1,0}) tuple(zero, x, out)
  loop = (s32[], f32[64,1024]{1,0}, f32[64,1024]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[64,1024]{1,0} get-tuple-element(loop), index=2
}
)";

TEST(CostModel, LoopTripCountIsReadFromItsCondition) {
  const TimePrediction p = Predict(Fill(kRowLoop, "@T@", "64"));
  ASSERT_EQ(p.loops.size(), 1u);
  EXPECT_EQ(p.loops[0].instruction, "loop");
  EXPECT_EQ(p.loops[0].trips, 64);
  EXPECT_TRUE(p.loops[0].trips_known);
  EXPECT_EQ(p.trips, 64);
}

TEST(CostModel, LoopCostScalesWithItsTripCount) {
  CostConstants c = Plain();
  c.trip_seconds = 1e-6;
  c.op_seconds = 1e-6;
  const TimePrediction p16 = Predict(Fill(kRowLoop, "@T@", "16"), c);
  const TimePrediction p32 = Predict(Fill(kRowLoop, "@T@", "32"), c);
  EXPECT_EQ(p32.loops[0].flops, 2 * p16.loops[0].flops);
  EXPECT_EQ(p32.loops[0].bytes, 2 * p16.loops[0].bytes);
  const double ratio = p32.loops[0].seconds / p16.loops[0].seconds;
  EXPECT_GT(ratio, 1.999);
  EXPECT_LT(ratio, 2.001);
  EXPECT_GT(p32.seconds, p16.seconds);
}

TEST(CostModel, KnownTripCountInBackendConfigWins) {
  std::string text = Fill(kRowLoop, "@T@", "64");
  const std::string call = "condition=cond, body=body";
  text.replace(text.find(call), call.size(),
               call + ", backend_config={\"known_trip_count\":{\"n\":\"8\"}}");
  const TimePrediction p = Predict(text);
  ASSERT_EQ(p.loops.size(), 1u);
  EXPECT_EQ(p.loops[0].trips, 8);
}

TEST(CostModel, UnreadableTripCountCountsOneTrip) {
  // The bound is a parameter, not a constant: the model cannot know it.
  std::string text = Fill(kRowLoop, "n = s32[] constant(@T@)", "n = s32[] get-tuple-element(state), index=0");
  const TimePrediction p = Predict(text);
  ASSERT_EQ(p.loops.size(), 1u);
  EXPECT_FALSE(p.loops[0].trips_known);
  EXPECT_EQ(p.loops[0].trips, 1);
}

// y = x w for x of 16 x 1024 and w of 1024 x 1024 (4 MB), as a loop of 16
// trips: @BODY@ computes this trip's part of y into `put`.
constexpr char kProductLoop[] = R"(HloModule m

body {
  state = (s32[], f32[16,1024]{1,0}, f32[1024,1024]{1,0}, f32[16,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  x = f32[16,1024]{1,0} get-tuple-element(state), index=1
  w = f32[1024,1024]{1,0} get-tuple-element(state), index=2
  out = f32[16,1024]{1,0} get-tuple-element(state), index=3
  zero = s32[] constant(0)
@BODY@
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[16,1024]{1,0}, f32[1024,1024]{1,0}, f32[16,1024]{1,0}) tuple(next, x, w, put)
}

cond {
  state = (s32[], f32[16,1024]{1,0}, f32[1024,1024]{1,0}, f32[16,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(16)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[16,1024]{1,0} parameter(0)
  w = f32[1024,1024]{1,0} parameter(1)
  zero = s32[] constant(0)
  f = f32[] constant(0)
  out = f32[16,1024]{1,0} broadcast(f), dimensions={}
  init = (s32[], f32[16,1024]{1,0}, f32[1024,1024]{1,0}, f32[16,1024]{1,0}) tuple(zero, x, w, out)
  loop = (s32[], f32[16,1024]{1,0}, f32[1024,1024]{1,0}, f32[16,1024]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[16,1024]{1,0} get-tuple-element(loop), index=3
}
)";

TEST(CostModel, LoopThatRereadsAWholeOperandCostsMoreThanOneThatSlicesIt) {
  // A machine's proportions: matrix products 10 times faster than memory.
  CostConstants c = Plain();
  c.dot_f32_flops_per_second = 1e11;
  c.bytes_per_second = 1e10;
  // By rows of x: every trip reads all of w (16 x 4 MB).
  const TimePrediction rows = Predict(Fill(kProductLoop, "@BODY@", R"(
  xi = f32[1,1024]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={1,1024}
  d = f32[1,1024]{1,0} dot(xi, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  put = f32[16,1024]{1,0} dynamic-update-slice(out, d, i, zero))"), c);
  // By column blocks of w: every trip reads one 64-column block (w once in all).
  const TimePrediction blocks = Predict(Fill(kProductLoop, "@BODY@", R"(
  sixty_four = s32[] constant(64)
  at = s32[] multiply(i, sixty_four)
  wj = f32[1024,64]{1,0} dynamic-slice(w, zero, at), dynamic_slice_sizes={1024,64}
  d = f32[16,64]{1,0} dot(x, wj), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  put = f32[16,1024]{1,0} dynamic-update-slice(out, d, zero, at))"), c);
  EXPECT_EQ(rows.dot_flops, blocks.dot_flops);  // the same product
  EXPECT_GT(rows.bytes, 16LL * 1024 * 1024 * 4);
  EXPECT_LT(blocks.bytes, 4LL * 1024 * 1024 * 4);
  EXPECT_GT(rows.seconds, 4 * blocks.seconds);
}

// The rows plan of kProductLoop: every trip reads all of w (4 MB).
constexpr char kRereadBody[] = R"(
  xi = f32[1,1024]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={1,1024}
  d = f32[1,1024]{1,0} dot(xi, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  put = f32[16,1024]{1,0} dynamic-update-slice(out, d, i, zero))";

TEST(CostModel, RereadOfABufferSmallerThanTheCacheIsReadFromMemoryOnce) {
  const std::string text = Fill(kProductLoop, "@BODY@", kRereadBody);
  const TimePrediction uncached = Predict(text, Cached(0));
  const TimePrediction cached = Predict(text, Cached(8 << 20));  // w (4 MB) fits
  EXPECT_EQ(cached.bytes, uncached.bytes);  // the same traffic, from another level
  // 16 reads of w from memory against one, and 15 at ten times the speed.
  const double w_seconds = 1024.0 * 1024 * 4 / 1e9;  // one read of w from memory
  EXPECT_GT(uncached.seconds, 16 * w_seconds);
  EXPECT_LT(cached.seconds, (1 + 15 / 10.0) * w_seconds * 1.05);
  EXPECT_GT(cached.seconds, (1 + 15 / 10.0) * w_seconds);
}

// A loop that writes a 4 MB buffer block by block (16 blocks of 64 rows),
// then @READ@ (the loop's result `r`, or the parameter `p` of the same size)
// summed whole.
constexpr char kBlockWriter[] = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

body {
  state = (s32[], f32[1024,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  out = f32[1024,1024]{1,0} get-tuple-element(state), index=1
  zero = s32[] constant(0)
  sixty_four = s32[] constant(64)
  at = s32[] multiply(i, sixty_four)
  half = f32[] constant(0.5)
  block = f32[64,1024]{1,0} broadcast(half), dimensions={}
  put = f32[1024,1024]{1,0} dynamic-update-slice(out, block, at, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[1024,1024]{1,0}) tuple(next, put)
}

cond {
  state = (s32[], f32[1024,1024]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(@TRIPS@)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  zero = s32[] constant(0)
  f = f32[] constant(0)
  out = f32[1024,1024]{1,0} broadcast(f), dimensions={}
  init = (s32[], f32[1024,1024]{1,0}) tuple(zero, out)
  loop = (s32[], f32[1024,1024]{1,0}) while(init), condition=cond, body=body
  r = f32[1024,1024]{1,0} get-tuple-element(loop), index=1
  fzero = f32[] constant(0)
  ROOT s = f32[] reduce(@READ@, fzero), dimensions={0,1}, to_apply=add
}
)";

// Seconds saved by summing the loop's result instead of a parameter (the
// sum's arithmetic fast enough for its reads to decide).
double SavedByReadingTheLoopsResult(const std::string& trips, double cache_bytes) {
  const std::string loop = Fill(kBlockWriter, "@TRIPS@", trips);
  CostConstants c = Cached(cache_bytes);
  c.elementwise_per_second = 1e13;
  return Predict(Fill(loop, "@READ@", "p"), c).seconds -
         Predict(Fill(loop, "@READ@", "r"), c).seconds;
}

TEST(CostModel, BufferALoopWroteBlockByBlockIsReadFromTheCache) {
  // All 16 blocks written: the next kernel finds the 4 MB in an 8 MB cache,
  // where the parameter comes from memory (4 ms against 0.4 ms).
  const double read_seconds = 1024.0 * 1024 * 4 / 1e9;
  EXPECT_LT(std::abs(SavedByReadingTheLoopsResult("16", 8 << 20) - 0.9 * read_seconds), 1e-6);
}

TEST(CostModel, BufferALoopWroteInPartIsReadFromMemory) {
  // Half the blocks written: the rest of the buffer is as cold as the parameter.
  EXPECT_LT(std::abs(SavedByReadingTheLoopsResult("8", 8 << 20)), 1e-9);
}

TEST(CostModel, BufferALoopWroteLargerThanTheCacheIsReadFromMemory) {
  EXPECT_LT(std::abs(SavedByReadingTheLoopsResult("16", 2 << 20)), 1e-9);
}

// Four matrix-vector products in a chain (each multiplies the last's
// result), by p, by q, by q again and by p again, each matrix of 4 MB.
constexpr char kRereads[] = R"(HloModule m

ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  q = f32[1024,1024]{1,0} parameter(1)
  v = f32[1024,1]{1,0} parameter(2)
  d1 = f32[1024,1]{1,0} dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[1024,1]{1,0} dot(q, d1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[1024,1]{1,0} dot(q, d2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d4 = f32[1024,1]{1,0} dot(p, d3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(CostModel, ReadsFromTheCacheAlsoPushOutWhatCameBefore) {
  // In a 10 MB cache, the second read of q (4 MB) comes from the cache; the
  // second read of p follows 12 MB of traffic, the cached 4 MB included, so
  // p has left the cache: three reads from memory, one from the cache (the
  // 4 KB vectors add under 0.1 ms).
  const TimePrediction t = Predict(kRereads, Cached(10 << 20));
  const double read_seconds = 1024.0 * 1024 * 4 / 1e9;
  EXPECT_EQ(t.kernels, 4);
  EXPECT_GT(t.seconds, 3 * read_seconds + read_seconds / 10);
  EXPECT_LT(t.seconds, 3 * read_seconds + read_seconds / 10 + 1e-4);
}

TEST(CostModel, RereadOfABufferLargerThanTheCacheIsReadFromMemoryEveryTrip) {
  const std::string text = Fill(kProductLoop, "@BODY@", kRereadBody);
  const TimePrediction uncached = Predict(text, Cached(0));
  const TimePrediction cached = Predict(text, Cached(2 << 20));  // w (4 MB) does not fit
  // w comes from memory on all 16 trips; only the small x and out hit the cache.
  const double w_seconds = 1024.0 * 1024 * 4 / 1e9;  // one read of w from memory
  EXPECT_GT(cached.seconds, 16 * w_seconds);
  EXPECT_GT(cached.seconds, 0.99 * uncached.seconds);
}

// A loop of @T@ trips, each exp of a row of x (f32[@T@ x @N@]) into a
// temporary and its squared norm (the slice written and read back, as a
// split block of a kernel matrix is): the trip's working set is two rows.
constexpr char kSliceLoop[] = R"(HloModule m

body {
  state = (s32[], f32[@T@,@N@]{1,0}, f32[@T@]{0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  x = f32[@T@,@N@]{1,0} get-tuple-element(state), index=1
  out = f32[@T@]{0} get-tuple-element(state), index=2
  zero = s32[] constant(0)
  xi = f32[1,@N@]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={1,@N@}
  e = f32[1,@N@]{1,0} exponential(xi)
  d = f32[1,1]{1,0} dot(e, e), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  r = f32[1]{0} reshape(d)
  put = f32[@T@]{0} dynamic-update-slice(out, r, i)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[@T@,@N@]{1,0}, f32[@T@]{0}) tuple(next, x, put)
}

cond {
  state = (s32[], f32[@T@,@N@]{1,0}, f32[@T@]{0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(@T@)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[@T@,@N@]{1,0} parameter(0)
  zero = s32[] constant(0)
  f = f32[] constant(0)
  out = f32[@T@]{0} broadcast(f), dimensions={}
  init = (s32[], f32[@T@,@N@]{1,0}, f32[@T@]{0}) tuple(zero, x, out)
  loop = (s32[], f32[@T@,@N@]{1,0}, f32[@T@]{0}) while(init), condition=cond, body=body
  ROOT r = f32[@T@]{0} get-tuple-element(loop), index=2
}
)";

TimePrediction SliceLoop(int64_t trips, int64_t row, const CostConstants& c) {
  return Predict(Fill(Fill(kSliceLoop, "@T@", std::to_string(trips)), "@N@", std::to_string(row)), c);
}

TEST(CostModel, SliceWorkingSetUnderTheCacheIsFasterPerByteThanOneAbove) {
  // The same 64 MB of x, by 64 slices of 1 MB or by 4 slices of 16 MB,
  // against a 4 MB cache: the small slices' temporaries stay cached.
  const CostConstants c = Cached(4 << 20);
  const TimePrediction small = SliceLoop(64, 1 << 18, c);
  const TimePrediction large = SliceLoop(4, 1 << 22, c);
  EXPECT_EQ(small.transcendentals, large.transcendentals);
  const double small_per_byte = small.seconds / static_cast<double>(small.bytes);
  const double large_per_byte = large.seconds / static_cast<double>(large.bytes);
  EXPECT_LT(small_per_byte, 0.75 * large_per_byte);
  // Without a cache the two plans move their bytes at one speed.
  const TimePrediction small_plain = SliceLoop(64, 1 << 18, Plain());
  const TimePrediction large_plain = SliceLoop(4, 1 << 22, Plain());
  const double ratio = (small_plain.seconds / static_cast<double>(small_plain.bytes)) /
                       (large_plain.seconds / static_cast<double>(large_plain.bytes));
  EXPECT_GT(ratio, 0.99);
  EXPECT_LT(ratio, 1.01);
}

}  // namespace
