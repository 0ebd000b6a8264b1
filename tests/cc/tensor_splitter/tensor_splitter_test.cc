// Rules of the tensor-splitter pass (cc/passes/tensor_splitter/tensor_splitter.h), one per
// test. The thresholds are set in bytes so that tensors of a few KB count
// as oversized: --xla_tensor_size_threshold (the limit) and
// --xla_tensor_split_size (what one loop iteration may hold).
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/cost.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "passes/tensor_splitter/region.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::CountOccurrences;
using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::ModuleRun;
using exla_test::PassRun;
using exla_test::RunPassObject;
namespace m = exla::m;
using exla_test::RunPass;
using exla_test::SizeOptions;

constexpr char kPass[] = "tensor-splitter";

// A module with an f32 add reducer `sum` and the given entry body.
std::string Module(const std::string& entry) {
  return "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nmax {\n  a = f32[] parameter(0)\n"
         "  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY main {\n" +
         entry + "}\n";
}

// A Gaussian-kernel matrix-vector product exp(-|x_i - y_j|^2) . v built from
// broadcasts: the 64 x 64 x 4 difference is 64 KB, the result 256 bytes.
const std::string kKernelMatvec = Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  sq = f32[64,64,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  k = f32[64,64]{1,0} exponential(s)
  ROOT kv = f32[64]{0} dot(k, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");

TEST(TensorSplitter, WithoutThresholdDoesNothing) {
  ExpectUnchanged(kPass, kKernelMatvec);
}

TEST(TensorSplitter, ProgramBelowThresholdUnchanged) {
  // Every tensor fits in 1 MB: nothing to split.
  ExpectUnchanged(kPass, kKernelMatvec, SizeOptions(1 << 20, 0));
}

TEST(TensorSplitter, KernelMatvecBecomesWhileLoop) {
  // A row of the difference is 1 KB, so 2 KB slices hold 2 rows: 32 trips.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(4096, 2048));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      kv.split_body {
    CHECK:      [[STATE:state[.0-9]*]] = (s32[], f32[64]{0}, f32[64,4]{1,0}, f32[64,4]{1,0}, f32[64]{0}) parameter(0)
    CHECK-NEXT: [[I:[a-z0-9.-]+]] = s32[] get-tuple-element([[STATE]]), index=0
    CHECK-NEXT: [[CHUNK:[a-z0-9.-]+]] = s32[] constant(2)
    CHECK-NEXT: [[OFFSET:[a-z0-9.-]+]] = s32[] multiply([[I]], [[CHUNK]])
    CHECK:      [[XS:[a-z0-9.-]+]] = f32[2,4]{1,0} dynamic-slice({{[a-z0-9.-]+}}, [[OFFSET]], {{[a-z0-9.-]+}}), dynamic_slice_sizes={2,4}
    CHECK:      f32[2,64,4]{2,1,0} broadcast([[XS]]), dimensions={0,2}
    CHECK:      f32[2,64]{1,0} reduce(
    CHECK:      f32[2,64]{1,0} exponential(
    CHECK:      f32[2]{0} dot(
    CHECK:      ROOT {{.*}} tuple(
    CHECK:      kv.split_cond {
    CHECK:      [[TRIPS:[a-z0-9.-]+]] = s32[] constant(32)
    CHECK-NEXT: ROOT {{.*}} = pred[] compare({{[a-z0-9.-]+}}, [[TRIPS]]), direction=LT
    CHECK:      ENTRY main {
    CHECK-NOT:  f32[64,64
    CHECK:      [[W:[a-z0-9.-]+]] = {{.*}} while({{[a-z0-9.-]+}}), condition=kv.split_cond, body=kv.split_body
    CHECK-NEXT: ROOT {{.*}} = f32[64]{0} get-tuple-element([[W]]), index=1
  )"));
}

TEST(TensorSplitter, KernelMatvecRootReadsTheLoopThatSlicesRows) {
  // The same rewrite, matched as structure: the root reads the loop's
  // result, and the body takes row slices of x from the loop state.
  exla::TensorSplitter splitter(4096, 2048);
  const ModuleRun run = RunPassObject(splitter, kKernelMatvec);
  EXPECT_TRUE(run.changed);
  exla::HloInstruction* loop = nullptr;
  ASSERT_TRUE(exla::Match(run.module->entry()->root(),
                          m::GetTupleElement(m::While(m::Tuple()).Bind(&loop))));
  const exla::HloComputation* body = loop->CalledComputation("body");
  ASSERT_TRUE(body != nullptr);
  int row_slices = 0;
  for (const auto& instruction : body->instructions()) {
    exla::HloInstruction* offset = nullptr;
    if (exla::Match(instruction.get(),
                    m::DynamicSlice(m::GetTupleElement(m::Parameter()), m::Multiply(m::Op(&offset),
                                    m::ConstantScalar()), m::ConstantScalar())) &&
        instruction->shape().dim(0) == 2) {
      ++row_slices;
    }
  }
  EXPECT_EQ(row_slices, 1);  // x: y and v are read whole by every trip
  EXPECT_EQ(run.record.loops.size(), 1u);
}

TEST(TensorSplitter, RecordsEachLoopAsData) {
  // The same loop as above, as the record callers read: no note is parsed.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(4096, 2048));
  ASSERT_EQ(run.record.loops.size(), 1u);
  const exla::SplitLoop& loop = run.record.loops[0];
  EXPECT_EQ(loop.computation, "main");
  EXPECT_EQ(loop.extents, (std::vector<int64_t>{64, 64, 4}));  // the [64,64,4] broadcast
  EXPECT_EQ(loop.dimension, 0);
  EXPECT_EQ(loop.extent, 64);
  EXPECT_EQ(loop.chunk, 2);
  EXPECT_EQ(loop.chunks, 32);
  EXPECT_EQ(loop.remainder, 0);
  EXPECT_EQ(loop.bytes, 64 * 64 * 4 * 4);
  EXPECT_TRUE(loop.recomputed.empty());
  EXPECT_EQ(loop.recomputed_flops, 0);
  EXPECT_TRUE(run.record.unsplit.empty());
  EXPECT_TRUE(run.record.program_flops > 0);
  // The note is printed from the record.
  ASSERT_EQ(run.messages.size(), 1u);
  EXPECT_EQ(run.messages[0], exla::SplitNoteText(loop));
}

TEST(TensorSplitter, RecordsWhatItLeavesWholeAsData) {
  // A sort consumes the whole row: nothing can take slices of it.
  const PassRun run = RunPass(kPass, R"(HloModule m

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT
}

ENTRY main {
  x = f32[64,64]{1,0} parameter(0)
  e = f32[64,64]{1,0} exponential(x)
  ROOT s = f32[64,64]{1,0} sort(e), dimensions={1}, to_apply=less
}
)", SizeOptions(1024, 0));
  ASSERT_TRUE(!run.record.unsplit.empty());
  const exla::UnsplitTensor& left = run.record.unsplit[0];
  EXPECT_EQ(left.instruction, "e");
  EXPECT_EQ(left.bytes, 64 * 64 * 4);
  EXPECT_TRUE(!left.per_device);
  EXPECT_TRUE(left.reason.find("sort") != std::string::npos) << left.reason;
  EXPECT_TRUE(HasMessage(run, exla::UnsplitNoteText(left)));
}

TEST(TensorSplitter, SurvivingDimensionWrittenWithDynamicUpdateSlice) {
  // The split rows survive into the result: each trip writes its 2 rows of
  // the result buffer (loop state element 1) at the trip's offset.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(4096, 2048));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      kv.split_body {
    CHECK:      [[OFFSET:[a-z0-9.-]+]] = s32[] multiply(
    CHECK:      [[PART:[a-z0-9.-]+]] = f32[2]{0} dot(
    CHECK:      [[BUFFER:[a-z0-9.-]+]] = f32[64]{0} get-tuple-element({{.*}}), index=1
    CHECK-NEXT: [[DUS:[a-z0-9.-]+]] = f32[64]{0} dynamic-update-slice([[BUFFER]], [[PART]], [[OFFSET]])
    CHECK-NEXT: ROOT {{.*}} tuple({{[a-z0-9.-]+}}, [[DUS]],
  )"));
}

TEST(TensorSplitter, ChunkFollowsSplitSize) {
  // 4 KB slices hold 4 rows: 16 trips of 4.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(8192, 4096));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: dynamic_slice_sizes={4,4}
    CHECK: kv.split_cond {
    CHECK: s32[] constant(16)
  )"));
}

TEST(TensorSplitter, DefaultSplitSizeIsQuarterOfThreshold) {
  // No split size: 8 KB / 4 = 2 KB slices, 2 rows each.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(8192, 0));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: dynamic_slice_sizes={2,4}
    CHECK: kv.split_cond {
    CHECK: s32[] constant(32)
  )"));
}

TEST(TensorSplitter, AtLeastTwoPieces) {
  // A split size that would hold 58 of the 64 rows still gives two halves:
  // one piece of nearly everything would rebuild the whole tensor.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(60000, 60000));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     dynamic_slice_sizes={32,4}
    CHECK:     .split_cond {
    CHECK:     s32[] constant(2)
    CHECK-NOT: split_body.1
  )"));
}

// A reduction over 256 points y_j: the split (longest) dimension is reduced
// away. With `all_dims` every dimension is, so no dimension survives for the
// splitter to fall back on.
std::string ReduceOverPoints(const char* reducer, const char* init, bool all_dims = false) {
  const std::string reduce = all_dims ? "f32[] reduce(p, init), dimensions={0,1,2}"
                                      : "f32[4]{0} reduce(p, init), dimensions={1,2}";
  return "HloModule m\n\nreducer {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT r = f32[] " + std::string(reducer) + "(a, b)\n}\n\nENTRY main {\n" + R"(
  x = f32[4,4]{1,0} parameter(0)
  y = f32[256,4]{1,0} parameter(1)
  bx = f32[4,256,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[4,256,4]{2,1,0} broadcast(y), dimensions={1,2}
  p = f32[4,256,4]{2,1,0} multiply(bx, by)
  init = f32[] constant()" + init + R"()
  ROOT r = )" + reduce + R"(, to_apply=reducer
}
)";
}

TEST(TensorSplitter, ReducedDimensionAccumulatedWithCompensatedAdd) {
  // The partial sums are added with Kahan's compensation, carried as the last
  // element of the loop state: y = part - c, t = sum + y, c' = (t - sum) - y,
  // reset to 0 once t overflows (inf - inf would make the sum NaN). Chunks of
  // 4 points (256 bytes of a 2048-byte tensor): too small for partial sums,
  // so each chunk is reduced to the result's shape.
  const PassRun run = RunPass(kPass, ReduceOverPoints("add", "0"), SizeOptions(2048, 256));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      dynamic_slice_sizes={4,4}
    CHECK:      [[PART:[a-z0-9.-]+]] = f32[4]{0} reduce({{.*}}), dimensions={1,2}, to_apply=reducer
    CHECK:      [[ACC:[a-z0-9.-]+]] = f32[4]{0} get-tuple-element({{.*}}), index=1
    CHECK-NEXT: [[C:[a-z0-9.-]+]] = f32[4]{0} get-tuple-element({{.*}}), index=4
    CHECK-NEXT: [[Y:[a-z0-9.-]+]] = f32[4]{0} subtract([[PART]], [[C]])
    CHECK-NEXT: [[SUM:[a-z0-9.-]+]] = f32[4]{0} add([[ACC]], [[Y]])
    CHECK-NEXT: [[ADDED:[a-z0-9.-]+]] = f32[4]{0} subtract([[SUM]], [[ACC]])
    CHECK-NEXT: [[ERROR:[a-z0-9.-]+]] = f32[4]{0} subtract([[ADDED]], [[Y]])
    CHECK-NEXT: [[FINITE:[a-z0-9.-]+]] = pred[4]{0} is-finite([[SUM]])
    CHECK:      [[NEXT_C:[a-z0-9.-]+]] = f32[4]{0} select([[FINITE]], [[ERROR]], {{[a-z0-9.-]+}})
    CHECK-NEXT: ROOT {{.*}} tuple({{[a-z0-9.-]+}}, [[SUM]], {{.*}}, [[NEXT_C]])
    CHECK:      ENTRY main {
    CHECK:      [[INIT:[a-z0-9.-]+]] = f32[4]{0} broadcast({{[a-z0-9.-]+}}), dimensions={}
    CHECK:      [[ZERO_C:[a-z0-9.-]+]] = f32[4]{0} broadcast({{[a-z0-9.-]+}}), dimensions={}
    CHECK:      tuple({{[a-z0-9.-]+}}, [[INIT]], x, y, [[ZERO_C]])
    CHECK-NOT:  reduce(
  )"));
}

TEST(TensorSplitter, SumOverSplitAndOtherDimensionsKeepsPartialSums) {
  // Chunks of 16 points: each chunk is summed along the points only, into
  // one compensated sum per (row, feature) (f32[4,4]), and the features are
  // summed once, after the loop. Summing the whole chunk to f32[4] would
  // leave long sequential runs to XLA's rounding.
  const PassRun run = RunPass(kPass, ReduceOverPoints("add", "0"), SizeOptions(2048, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      dynamic_slice_sizes={16,4}
    CHECK:      [[PART:[a-z0-9.-]+]] = f32[4,4]{1,0} reduce({{.*}}), dimensions={1}, to_apply=reducer
    CHECK:      [[ACC:[a-z0-9.-]+]] = f32[4,4]{1,0} get-tuple-element({{.*}}), index=1
    CHECK-NEXT: [[C:[a-z0-9.-]+]] = f32[4,4]{1,0} get-tuple-element({{.*}}), index=4
    CHECK-NEXT: [[Y:[a-z0-9.-]+]] = f32[4,4]{1,0} subtract([[PART]], [[C]])
    CHECK-NEXT: [[SUM:[a-z0-9.-]+]] = f32[4,4]{1,0} add([[ACC]], [[Y]])
    CHECK:      ENTRY main {
    CHECK:      [[INIT:[a-z0-9.-]+]] = f32[4,4]{1,0} broadcast(init), dimensions={}
    CHECK:      [[ZERO_C:[a-z0-9.-]+]] = f32[4,4]{1,0} broadcast({{[a-z0-9.-]+}}), dimensions={}
    CHECK:      [[LOOP:[a-z0-9.-]+]] = {{.*}} while(
    CHECK-NEXT: [[PARTIAL:[a-z0-9.-]+]] = f32[4,4]{1,0} get-tuple-element([[LOOP]]), index=1
    CHECK-NEXT: ROOT {{.*}} = f32[4]{0} reduce([[PARTIAL]], init), dimensions={1}, to_apply=reducer
  )"));
}

TEST(TensorSplitter, SumOfEveryDimensionKeepsPartialSumsOfTheOthers) {
  // A sum to a scalar: the loop keeps f32[4,4] partial sums (dimensions 0
  // and 2 of the operand), reduced over both after the loop.
  const PassRun run = RunPass(kPass, ReduceOverPoints("add", "0", /*all_dims=*/true),
                              SizeOptions(2048, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      f32[4,4]{1,0} reduce({{.*}}), dimensions={1}, to_apply=reducer
    CHECK:      ENTRY main {
    CHECK:      [[LOOP:[a-z0-9.-]+]] = {{.*}} while(
    CHECK-NEXT: [[PARTIAL:[a-z0-9.-]+]] = f32[4,4]{1,0} get-tuple-element([[LOOP]]), index=1
    CHECK-NEXT: ROOT {{.*}} = f32[] reduce([[PARTIAL]], init), dimensions={0,1}, to_apply=reducer
  )"));
}

TEST(TensorSplitter, MaxOverSplitAndOtherDimensionsReducedInTheLoop) {
  // A maximum is exact in any order: no partial results, no compensation.
  const PassRun run = RunPass(kPass, ReduceOverPoints("maximum", "-inf"), SizeOptions(2048, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      f32[4]{0} reduce({{.*}}), dimensions={1,2}, to_apply=reducer
    CHECK:      ENTRY main {
    CHECK:      [[LOOP:[a-z0-9.-]+]] = {{.*}} while(
    CHECK-NEXT: ROOT {{.*}} = f32[4]{0} get-tuple-element([[LOOP]]), index=1
  )"));
}

TEST(TensorSplitter, IntegerSumAccumulatedWithoutCompensation) {
  // Integer addition is exact: a plain add, and no extra loop state.
  const PassRun run = RunPass(kPass, R"(HloModule m

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}

ENTRY main {
  x = s32[4,4]{1,0} parameter(0)
  y = s32[256,4]{1,0} parameter(1)
  bx = s32[4,256,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = s32[4,256,4]{2,1,0} broadcast(y), dimensions={1,2}
  p = s32[4,256,4]{2,1,0} multiply(bx, by)
  zero = s32[] constant(0)
  ROOT r = s32[4]{0} reduce(p, zero), dimensions={1,2}, to_apply=add
}
)", SizeOptions(2048, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      [[ACC:[a-z0-9.-]+]] = s32[4]{0} get-tuple-element({{.*}}), index=1
    CHECK-NEXT: [[SUM:[a-z0-9.-]+]] = s32[4]{0} add([[ACC]], {{[a-z0-9.-]+}})
    CHECK-NEXT: ROOT {{.*}} = (s32[], s32[4]{0}, s32[4,4]{1,0}, s32[256,4]{1,0}) tuple(
  )"));
}

TEST(TensorSplitter, MaxReductionAccumulatesWithMaximum) {
  // The accumulator starts from the reduce's own init value (-inf).
  const PassRun run = RunPass(kPass, ReduceOverPoints("maximum", "-inf"), SizeOptions(2048, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      [[PART:[a-z0-9.-]+]] = f32[4]{0} reduce(
    CHECK:      [[ACC:[a-z0-9.-]+]] = f32[4]{0} get-tuple-element({{.*}}), index=1
    CHECK-NEXT: {{[a-z0-9.-]+}} = f32[4]{0} maximum([[ACC]], [[PART]])
    CHECK:      ENTRY main {
    CHECK:      init = f32[] constant(-inf)
    CHECK:      f32[4]{0} broadcast(init), dimensions={}
  )"));
}

TEST(TensorSplitter, NonAssociativeReducerRefused) {
  // subtract cannot be accumulated slice by slice.
  const std::string module = ReduceOverPoints("subtract", "0", /*all_dims=*/true);
  ExpectUnchanged(kPass, module, SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(RunPass(kPass, module, SizeOptions(2048, 1024)),
                         "left main/p f32[4,256,4] (16.4 KB) unsplit: dimension 1: r reduces the "
                         "split dimension with a reducer that cannot be accumulated slice by slice"));
}

TEST(TensorSplitter, AddWithNonZeroInitRefused) {
  // Every slice would add the init value 1 again.
  const std::string module = ReduceOverPoints("add", "1", /*all_dims=*/true);
  ExpectUnchanged(kPass, module, SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(RunPass(kPass, module, SizeOptions(2048, 1024)),
                         "cannot be accumulated slice by slice"));
}

TEST(TensorSplitter, RemainderLoopWhenChunkDoesNotDivide) {
  // 67 points (a prime) in chunks of 8: a one-trip loop for the first 3,
  // then 8 trips from point 3 (the remainder first: XLA inlines its trip,
  // which would otherwise run early and stay alive across the main loop).
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[4,4]{1,0} parameter(0)
  y = f32[67,4]{1,0} parameter(1)
  bx = f32[4,67,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[4,67,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[4,67,4]{2,1,0} subtract(bx, by)
  sq = f32[4,67,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT s = f32[4]{0} reduce(sq, zero), dimensions={1,2}, to_apply=sum
)"), SizeOptions(2048, 512));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      s.split_body {
    CHECK:      dynamic_slice_sizes={3,4}
    CHECK:      s.split_cond {
    CHECK:      s32[] constant(1)
    CHECK:      s.split_body.1 {
    CHECK:      [[BASE:[a-z0-9.-]+]] = s32[] constant(3)
    CHECK-NEXT: [[OFFSET:[a-z0-9.-]+]] = s32[] add({{[a-z0-9.-]+}}, [[BASE]])
    CHECK:      dynamic-slice({{[a-z0-9.-]+}}, [[OFFSET]], {{[a-z0-9.-]+}}), dynamic_slice_sizes={8,4}
    CHECK:      s.split_cond.1 {
    CHECK:      s32[] constant(8)
    CHECK:      ENTRY main {
    CHECK:      [[FIRST:[a-z0-9.-]+]] = {{.*}} while({{.*}}), condition=s.split_cond, body=s.split_body
    CHECK:      get-tuple-element([[FIRST]]), index=1
    CHECK:      [[SECOND:[a-z0-9.-]+]] = {{.*}} while({{.*}}), condition=s.split_cond.1, body=s.split_body.1
    CHECK-NEXT: [[PARTIAL:[a-z0-9.-]+]] = f32[4,4]{1,0} get-tuple-element([[SECOND]]), index=1
    CHECK-NEXT: ROOT {{.*}} = f32[4]{0} reduce([[PARTIAL]], zero), dimensions={1}, to_apply=sum
  )"));
}

// Differences of 4 points to `points` others, summed: one point of the
// difference is 4 x 4 floats (64 bytes), so a 512-byte split size takes at
// most 8 points a chunk.
std::string PointsReduced(int points) {
  const std::string n = std::to_string(points);
  return Module("  x = f32[4,4]{1,0} parameter(0)\n  y = f32[" + n + ",4]{1,0} parameter(1)\n"
                "  bx = f32[4," + n + ",4]{2,1,0} broadcast(x), dimensions={0,2}\n"
                "  by = f32[4," + n + ",4]{2,1,0} broadcast(y), dimensions={1,2}\n"
                "  d = f32[4," + n + ",4]{2,1,0} subtract(bx, by)\n"
                "  zero = f32[] constant(0)\n"
                "  ROOT s = f32[4]{0} reduce(d, zero), dimensions={1,2}, to_apply=sum\n");
}

TEST(TensorSplitter, ChunkDividesTheExtentWhereOneIsNearTheLargest) {
  // 65 = 5 x 13: 13 chunks of 5 rather than 8 of 8 and a remainder loop for
  // one point (a second loop body to compile and run for a sliver).
  const PassRun run = RunPass(kPass, PointsReduced(65), SizeOptions(2048, 512));
  EXPECT_EQ(CountOccurrences(run.text, " while("), 1);
  EXPECT_TRUE(HasMessage(run, "on dimension 1 of extent 65: 13 chunks of 5,"));
}

TEST(TensorSplitter, ChunksAreEqualWhereNoDivisorIsNearTheLargest) {
  // 34 = 2 x 17 points with at most 8 a chunk: 5 equal chunks of 7 would
  // overshoot, so 4 of 7 and one of 6, not 4 of 8 and one of 2.
  const PassRun run = RunPass(kPass, PointsReduced(34), SizeOptions(2048, 512));
  EXPECT_TRUE(HasMessage(run, "on dimension 1 of extent 34: 4 chunks of 7 and one of 6,"));
}

TEST(TensorSplitter, IotaSliceStartsAtTheOffset) {
  // A slice of an iota along its own dimension is iota + offset.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  io = f32[64,64,4]{2,1,0} iota(), iota_dimension=0
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  p = f32[64,64,4]{2,1,0} multiply(io, bx)
  zero = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(p, zero), dimensions={1,2}, to_apply=sum
)"), SizeOptions(4096, 2048));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      [[OFFSET:[a-z0-9.-]+]] = s32[] multiply(
    CHECK:      [[IOTA:[a-z0-9.-]+]] = f32[2,64,4]{2,1,0} iota(), iota_dimension=0
    CHECK-NEXT: [[START:[a-z0-9.-]+]] = f32[] convert([[OFFSET]])
    CHECK-NEXT: [[SPLAT:[a-z0-9.-]+]] = f32[2,64,4]{2,1,0} broadcast([[START]]), dimensions={}
    CHECK-NEXT: [[SHIFTED:[a-z0-9.-]+]] = f32[2,64,4]{2,1,0} add([[IOTA]], [[SPLAT]])
    CHECK:      multiply([[SHIFTED]],
  )"));
}

// A 64 x 64 x 16 product (256 KB) summed to one value per row.
const std::string kRowSumsOfProduct = Module(R"(
  x = f32[64,16]{1,0} parameter(0)
  y = f32[64]{0} parameter(1)
  bx = f32[64,64,16]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,16]{2,1,0} broadcast(y), dimensions={1}
  p = f32[64,64,16]{2,1,0} multiply(bx, by)
  e = f32[64,64,16]{2,1,0} exponential(p)
  zero = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(e, zero), dimensions={1,2}, to_apply=sum
)");

TEST(TensorSplitter, NestedLoopWhenOneSliceIsStillTooLarge) {
  // One row of the 64 x 64 x 16 product is 4 KB, over the 1 KB split size:
  // the loop body is split again along its second dimension.
  const PassRun run = RunPass(kPass, kRowSumsOfProduct, SizeOptions(8192, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     r.1.split_body {
    CHECK:     f32[1,16,16]{2,1,0} exponential(
    CHECK:     r.split_body {
    CHECK-NOT: f32[1,64,16]
    CHECK:     while({{.*}}), condition=r.1.split_cond, body=r.1.split_body
    CHECK:     dynamic-update-slice(
    CHECK:     ENTRY main {
    CHECK:     while({{.*}}), condition=r.split_cond, body=r.split_body
  )"));
  EXPECT_FALSE(HasMessage(run, "unsplit")) << "nothing should be left unsplit";
  // One note for the outer loop and one for the loop inside its body.
  EXPECT_TRUE(HasMessage(run, "split main/bx f32[64,64,16] (262.1 KB) on dimension 0 of extent "
                              "64: 64 chunks of 1"));
  EXPECT_TRUE(HasMessage(run, "split r.split_body/bx.1 f32[1,64,16] (4.1 KB) on dimension 1 of "
                              "extent 64: 4 chunks of 16"));
}

TEST(TensorSplitter, TileSizeSplitsBodiesWhoseSlicesFitTheSplitSize) {
  // Chunks of 4 rows (16 KB) fit the split size: no nested loop. With a
  // 4 KB tile size the body is split again, into 4 x 16 x 16 tiles.
  const PassRun plain = RunPass(kPass, kRowSumsOfProduct, SizeOptions(65536, 16384));
  EXPECT_EQ(CountOccurrences(plain.text, " while("), 1) << plain.text;
  exla::Options options = SizeOptions(65536, 16384);
  options.tensor_tile_size = 4096;
  const PassRun run = RunPass(kPass, kRowSumsOfProduct, options);
  EXPECT_TRUE(HasMessage(run, "split main/bx f32[64,64,16] (262.1 KB) on dimension 0 of extent "
                              "64: 16 chunks of 4"));
  EXPECT_TRUE(HasMessage(run, "split r.split_body/bx.1 f32[4,64,16] (16.4 KB) on dimension 1 of "
                              "extent 64: 4 chunks of 16"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     r.1.split_body {
    CHECK:     f32[4,16,16]{2,1,0} exponential(
    CHECK:     r.split_body {
    CHECK-NOT: f32[4,64,16]{2,1,0} exponential(
    CHECK:     ENTRY main {
  )"));
  EXPECT_FALSE(HasMessage(run, "unsplit")) << "nothing should be left unsplit";
}

TEST(TensorSplitter, WithATileSizeChunksMayExceedTheThreshold) {
  // A 128 KB split size over a 64 KB threshold: without a tile size the
  // chunks are held to the threshold (16 rows of 4 KB); with one, they take
  // the split size (32 rows: two chunks) and the bodies are split into
  // tiles, so that nothing above the threshold is left whole.
  const PassRun clamped = RunPass(kPass, kRowSumsOfProduct, SizeOptions(65536, 131072));
  EXPECT_TRUE(HasMessage(clamped, "split main/bx f32[64,64,16] (262.1 KB) on dimension 0 of "
                                  "extent 64: 4 chunks of 16"));
  exla::Options options = SizeOptions(65536, 131072);
  options.tensor_tile_size = 4096;
  const PassRun run = RunPass(kPass, kRowSumsOfProduct, options);
  EXPECT_TRUE(HasMessage(run, "split main/bx f32[64,64,16] (262.1 KB) on dimension 0 of extent "
                              "64: 2 chunks of 32"));
  EXPECT_TRUE(HasMessage(run, "split r.split_body/bx.1 f32[32,64,16] (131.1 KB) on dimension 1 of "
                              "extent 64: 32 chunks of 2"));
  EXPECT_FALSE(HasMessage(run, "unsplit")) << "nothing should be left unsplit";
}

// Column sums of exp(x yᵀ): a 1 KB sum over the rows, the split dimension.
const std::string kColumnSums = Module(R"(
  x = f32[256,4]{1,0} parameter(0)
  y = f32[256,4]{1,0} parameter(1)
  k = f32[256,256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  e = f32[256,256]{1,0} exponential(k)
  zero = f32[] constant(0)
  ROOT cols = f32[256]{0} reduce(e, zero), dimensions={0}, to_apply=sum
)");

TEST(TensorSplitter, SumsAboveATileWrittenInPlaceAreNotCompensated) {
  // Within the threshold a sum over the chunks is compensated (Kahan: the
  // overflow guard is-finite marks it). With tiles, in-place state and
  // chunks above the threshold, a sum larger than a tile would be written
  // back tile by tile, where its compensation makes XLA copy both buffers
  // whole: it is added plainly. Chunks held to the threshold keep it.
  exla::Options options = SizeOptions(65536, 131072);
  options.in_place_loop_state = true;
  const PassRun compensated = RunPass(kPass, kColumnSums, options);
  EXPECT_GE(CountOccurrences(compensated.text, "is-finite("), 1) << compensated.text;
  options.tensor_tile_size = 512;
  const PassRun plain = RunPass(kPass, kColumnSums, options);
  EXPECT_TRUE(plain.changed);
  EXPECT_EQ(CountOccurrences(plain.text, "is-finite("), 0) << plain.text;
  options.tensor_tile_size = 1024;  // the sum fits a tile: compensated
  const PassRun fits = RunPass(kPass, kColumnSums, options);
  EXPECT_GE(CountOccurrences(fits.text, "is-finite("), 1) << fits.text;
  options = SizeOptions(65536, 16384);  // chunks within the threshold
  options.in_place_loop_state = true;
  options.tensor_tile_size = 512;
  const PassRun held = RunPass(kPass, kColumnSums, options);
  EXPECT_GE(CountOccurrences(held.text, "is-finite("), 1) << held.text;
}

// A kernel normalised by its row and column sums, whose sums flow back into
// it: the shape of a gradient program.
constexpr char kNormalisedKernel[] = R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  sq = f32[64,64,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  k = f32[64,64]{1,0} exponential(s)
  rows = f32[64]{0} reduce(k, zero), dimensions={1}, to_apply=sum
  cols = f32[64]{0} reduce(k, zero), dimensions={0}, to_apply=sum
  brows = f32[64,64]{1,0} broadcast(rows), dimensions={0}
  bcols = f32[64,64]{1,0} broadcast(cols), dimensions={1}
  w = f32[64,64]{1,0} multiply(k, brows)
  z = f32[64,64]{1,0} multiply(w, bcols)
  ROOT total = f32[] reduce(z, zero), dimensions={0,1}, to_apply=sum
)";

TEST(TensorSplitter, SinkRegionsForGradientLikeProgram) {
  // Row sums and column sums of the kernel both flow back into it: no single
  // loop can produce everything. Split along the rows, the column sums need
  // every row first, so they get a loop of their own, which computes the
  // kernel slice by slice; the row sums need only the rows of a slice, so the
  // second loop, which needs the column sums, computes them with the rest.
  const PassRun run = RunPass(kPass, Module(kNormalisedKernel), SizeOptions(4096, 2048));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     total.split_body {
    CHECK:     [[ROWS:[a-z0-9.-]+]] = f32[2]{0} reduce({{.*}}), dimensions={1}
    CHECK:     f32[2,64]{1,0} broadcast([[ROWS]]), dimensions={0}
    CHECK:     ENTRY main {
    CHECK-NOT: f32[64,64
    CHECK:     [[SUMS:[a-z0-9.-]+]] = {{.*}} while({{.*}}), condition=cols.split_cond, body=cols.split_body
    CHECK:     [[COL_SUMS:[a-z0-9.-]+]] = f32[64]{0} get-tuple-element([[SUMS]]), index=1
    CHECK:     [[INIT:[a-z0-9.-]+]] = {{.*}} tuple({{.*}}[[COL_SUMS]], x, y, {{.*}})
    CHECK:     while([[INIT]]), condition=total.split_cond, body=total.split_body
  )"));
  // The last loop reads the sums the first one computed.
  EXPECT_EQ(CountOccurrences(run.text, " while("), 2);
  EXPECT_FALSE(HasMessage(run, "unsplit"));
}

TEST(TensorSplitter, NotesCountTheWorkSinkLoopsRepeat) {
  // The same program: the loop built first computes the kernel k (and d,
  // sq, s behind it) again while k stays for the column sums; the loop of
  // the column sums takes k over, so nothing is repeated there. Per kernel: d, sq and s are 3 x 16384
  // flops, k 4096. The program: those 53248 plus five 4096-element
  // operations (rows, cols, w, z, total) = 73728.
  const PassRun run = RunPass(kPass, Module(kNormalisedKernel), SizeOptions(4096, 2048));
  EXPECT_TRUE(HasMessage(run, "recomputes bx, by, d, k, s, sq (53.2 kFLOP)"));
  EXPECT_TRUE(HasMessage(run, "nothing recomputed"));
  EXPECT_TRUE(HasMessage(run, "recomputation: 53248 flops (72.2% of the program's 73728)"));
}

TEST(TensorSplitter, NoteNamesDimensionChunksAndNoRecomputation) {
  // 64 rows of 256 B each, split size 1 KB: 4 rows per chunk, 16 chunks.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[64,64]{1,0} parameter(0)
  e = f32[64,64]{1,0} exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(e, zero), dimensions={1}, to_apply=sum
)"), SizeOptions(8192, 1024));
  EXPECT_TRUE(HasMessage(run, "split main/e f32[64,64] (16.4 KB) on dimension 0 of extent 64: "
                              "16 chunks of 4, 2 instructions in the loop, nothing recomputed"));
  EXPECT_FALSE(HasMessage(run, "recomputation:"));
}

TEST(TensorSplitter, RowwiseNormalisationStaysInOneLoop) {
  // Row sums reduce the other dimension, so the row split flows through
  // them, their broadcast and the division: one loop, no sink regions.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  sq = f32[64,64,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  k = f32[64,64]{1,0} exponential(s)
  rows = f32[64]{0} reduce(k, zero), dimensions={1}, to_apply=sum
  brows = f32[64,64]{1,0} broadcast(rows), dimensions={0}
  p = f32[64,64]{1,0} divide(k, brows)
  ROOT pv = f32[64]{0} dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"), SizeOptions(4096, 2048));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     pv.split_body {
    CHECK:     [[ROWS:[a-z0-9.-]+]] = f32[2]{0} reduce({{.*}}), dimensions={1}
    CHECK:     [[B:[a-z0-9.-]+]] = f32[2,64]{1,0} broadcast([[ROWS]]), dimensions={0}
    CHECK:     f32[2,64]{1,0} divide({{[a-z0-9.-]+}}, [[B]])
    CHECK:     ENTRY main {
    CHECK-NOT: f32[64,64
  )"));
  EXPECT_EQ(CountOccurrences(run.text, " while("), 1);
}

TEST(TensorSplitter, ValuesComputedFromTheLoopsRowsJoinTheLoop) {
  // TensorFlow's softmax: the row maximum reaches the subtraction through
  // reshapes, which are small and not worth recomputing. Each of their
  // slices needs only the same rows of the maximum, so they join the loop
  // instead of being inputs that the loop itself would have to produce.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  s = f32[64,64]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  low = f32[] constant(-inf)
  m = f32[64]{0} reduce(s, low), dimensions={1}, to_apply=max
  m1 = f32[64,1]{1,0} reshape(m)
  m2 = f32[64]{0} reshape(m1)
  bm = f32[64,64]{1,0} broadcast(m2), dimensions={0}
  d = f32[64,64]{1,0} subtract(s, bm)
  e = f32[64,64]{1,0} exponential(d)
  ROOT o = f32[64,4]{1,0} dot(e, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"), SizeOptions(4096, 2048));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     o.split_body {
    CHECK:     [[M:[a-z0-9.-]+]] = f32[8]{0} reduce({{.*}}), dimensions={1}
    CHECK:     [[M1:[a-z0-9.-]+]] = f32[8,1]{1,0} reshape([[M]])
    CHECK:     [[M2:[a-z0-9.-]+]] = f32[8]{0} reshape([[M1]])
    CHECK:     f32[8,64]{1,0} broadcast([[M2]]), dimensions={0}
    CHECK:     ENTRY main {
    CHECK-NOT: f32[64,64
  )"));
  EXPECT_EQ(CountOccurrences(run.text, " while("), 1);
  EXPECT_TRUE(HasMessage(run, "8 instructions in the loop, nothing recomputed"));
}

// The shape of a sparse GP's gradient: A is computed from the inputs (the
// oversized part: 16 x 256, split along the 256 data points); the forward
// pass reduces it over the data (G = A Aᵀ, v = A e); the backward pass needs
// G, recomputes nothing else of the forward pass, and reduces the result
// over the data in three ways.
constexpr char kTwoPassGradient[] = R"(
  z = f32[16,3]{1,0} parameter(0)
  x = f32[256,3]{1,0} parameter(1)
  e = f32[256]{0} parameter(2)
  k = f32[16,256]{1,0} dot(z, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  a = f32[16,256]{1,0} exponential(k)
  g = f32[16,16]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  v = f32[16]{0} dot(a, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = f32[] constant(1)
  ones = f32[16,16]{1,0} broadcast(one), dimensions={}
  w = f32[16,16]{1,0} add(g, ones)
  da = f32[16,256]{1,0} dot(w, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dk = f32[16,256]{1,0} multiply(da, a)
  zero = f32[] constant(0)
  r1 = f32[] reduce(dk, zero), dimensions={0,1}, to_apply=sum
  r2 = f32[16]{0} dot(da, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ex = f32[16,256]{1,0} exponential(da)
  r3 = f32[256]{0} reduce(ex, zero), dimensions={0}, to_apply=sum
  ROOT out = (f32[16]{0}, f32[], f32[16]{0}, f32[256]{0}) tuple(v, r1, r2, r3)
)";

TEST(TensorSplitter, GradientTakesOneLoopPerPassOverTheData) {
  // The forward reductions need every slice before the backward pass can
  // start: two loops, the first for g and v, the second for all three
  // backward reductions together. A is computed once in each; a loop per
  // consumer would compute it once per consumer.
  const PassRun run = RunPass(kPass, Module(kTwoPassGradient), SizeOptions(4096, 2048));
  EXPECT_EQ(CountOccurrences(run.text, " while("), 2);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ENTRY main {
    CHECK-NOT: f32[16,256]
    CHECK:     [[FORWARD:[a-z0-9.-]+]] = {{.*}} while(
    CHECK:     [[G:[a-z0-9.-]+]] = f32[16,16]{1,0} get-tuple-element([[FORWARD]])
    CHECK:     while({{.*}}), condition={{[a-z0-9.-]+}}.split_cond
  )"));
  EXPECT_TRUE(HasMessage(run, "recomputes a, k (28.7 kFLOP)"));
  EXPECT_TRUE(HasMessage(run, "nothing recomputed"));
  EXPECT_FALSE(HasMessage(run, "unsplit"));
}

TEST(TensorSplitter, DeadOversizedValueRemovedNotSplit) {
  // Splitting a value nobody uses would only add a loop.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  unused = f32[64,64,4]{2,1,0} exponential(bx)
  ROOT r = f32[64,4]{1,0} add(x, y)
)"), SizeOptions(4096, 2048));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      ENTRY main {
    CHECK-NEXT: x = f32[64,4]{1,0} parameter(0)
    CHECK-NEXT: y = f32[64,4]{1,0} parameter(1)
    CHECK-NEXT: ROOT r = f32[64,4]{1,0} add(x, y)
  )"));
  EXPECT_TRUE(run.changed);  // removing the dead values is a change
}

TEST(TensorSplitter, ProgramOutputRefused) {
  // The kernel itself is the result: there is nothing smaller to reduce to,
  // and the product it comes from is as large.
  const std::string module = Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  s = f32[64,64]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT k = f32[64,64]{1,0} exponential(s)
)");
  ExpectUnchanged(kPass, module, SizeOptions(4096, 2048));
  EXPECT_TRUE(HasMessage(RunPass(kPass, module, SizeOptions(4096, 2048)),
                         "left main/k f32[64,64] (16.4 KB) unsplit: dimension 0: k is the "
                         "computation's result and too large to split"));
}

// p = exp(x) is 8 KB; g = pᵀp sums over its 64 rows into 32 x 32 (4 KB),
// above the 2 KB threshold. `root` decides whether g is a program result.
std::string GramOfRows(const std::string& root) {
  return Module(R"(
  x = f32[64,32]{1,0} parameter(0)
  p = f32[64,32]{1,0} exponential(x)
  g = f32[32,32]{1,0} dot(p, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
)" + root);
}

TEST(TensorSplitter, SumAsLargeAsAResultAccumulatesOverChunks) {
  // g is the program's result: its 4 KB must exist anyway, so the loop may
  // accumulate it although it is above the threshold, and p is never whole.
  // Its compensation would double those 4 KB: g is summed plainly.
  const PassRun run = RunPass(kPass, GramOfRows("  ROOT r = f32[32,32]{1,0} copy(g)\n"),
                              SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(run, "split main/p f32[64,32] (8.2 KB) on dimension 0 of extent 64"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     g.split_body {
    CHECK:     [[PART:[a-z0-9.-]+]] = f32[32,32]{1,0} dot(
    CHECK-NOT: subtract
    CHECK:     f32[32,32]{1,0} add({{[a-z0-9.-]+}}, [[PART]])
    CHECK-NOT: subtract
    CHECK:     ENTRY main {
    CHECK-NOT: f32[64,32]{1,0} exponential
  )"));
}

TEST(TensorSplitter, LargeSumStartsFromItsFirstChunk) {
  // The loop's 4 KB g starts from the first chunk's part, computed by a call
  // before the loop, not from a splat of zeros that XLA's schedule would
  // compute at the start of the program and keep live until the loop.
  const PassRun run = RunPass(kPass, GramOfRows("  ROOT r = f32[32,32]{1,0} copy(g)\n"),
                              SizeOptions(2048, 1024));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     g.split_first_body {
    CHECK:     [[PART:[a-z0-9.-]+]] = f32[32,32]{1,0} dot(
    CHECK-NOT: f32[32,32]{1,0} add(
    CHECK:     ROOT {{.*}} tuple({{.*}}[[PART]]
    CHECK:     ENTRY main {
    CHECK-NOT: f32[32,32]{1,0} broadcast(
    CHECK:     [[FIRST:[a-z0-9.-]+]] = {{.*}} call({{.*}}), to_apply=g.split_first_body
    CHECK:     while({{.*}}), condition={{.*}}, body=g.split_body
  )"));
}

TEST(TensorSplitter, SmallSumsStillStartFromZero) {
  // A sum below the threshold is compensated: its loop starts from zeros, and
  // no first trip is peeled.
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(4096, 1024));
  EXPECT_TRUE(FileCheck(run.text, "CHECK: f32[64]{0} broadcast("));
  EXPECT_EQ(CountOccurrences(run.text, "split_first_body"), 0);
}

// Two Gram matrices of the rows of exp(x) and of `second` (the program's
// results, 4 KB each); the rows (8 KB) are split by two loops.
std::string TwoGramsOfRows(const std::string& second) {
  return Module(R"(
  x = f32[64,32]{1,0} parameter(0)
  y = f32[64,32]{1,0} parameter(1)
  p = f32[64,32]{1,0} exponential(x)
  g = f32[32,32]{1,0} dot(p, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
)" + second + R"(
  h = f32[32,32]{1,0} dot(q, q), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = (f32[32,32]{1,0}, f32[32,32]{1,0}) tuple(g, h)
)");
}

TEST(TensorSplitter, IndependentLoopStartsAfterThePreviousOne) {
  // Nothing orders the two loops: the second's first trip slices its rows at
  // minus the magnitude of the first loop's result's first element, a start
  // XLA clamps to 0 and cannot compute before that loop ends.
  const PassRun run = RunPass(kPass, TwoGramsOfRows("  q = f32[64,32]{1,0} exponential(y)\n"),
                              SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(run, "starts after loop"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     h.split_first_body {
    CHECK:     [[WAIT:[a-z0-9.-]+]] = s32[] get-tuple-element({{.*}}), index=3
    CHECK:     [[START:[a-z0-9.-]+]] = s32[] add({{.*}}, [[WAIT]])
    CHECK:     dynamic-slice({{.*}}, [[START]], {{.*}})
    CHECK:     ENTRY main {
    CHECK:     [[LOOP:[a-z0-9.-]+]] = {{.*}} while({{.*}}), condition=g.split_cond
    CHECK:     f32[1,1]{1,0} slice({{.*}}), slice={[0:1], [0:1]}
    CHECK:     s32[] abs(
    CHECK:     [[NEGATED:[a-z0-9.-]+]] = s32[] negate(
    CHECK:     [[STATE:[a-z0-9.-]+]] = {{.*}} tuple({{.*}}, [[NEGATED]])
    CHECK:     call([[STATE]]), to_apply=h.split_first_body
  )"));
}

TEST(TensorSplitter, LoopThatReadsThePreviousOneIsNotMadeToWait) {
  // The second loop's rows are computed from the first loop's result: XLA
  // orders them already, and nothing is added.
  const PassRun run = RunPass(
      kPass,
      TwoGramsOfRows("  zero = f32[] constant(0)\n"
                     "  gs = f32[32]{0} reduce(g, zero), dimensions={0}, to_apply=sum\n"
                     "  gb = f32[64,32]{1,0} broadcast(gs), dimensions={1}\n"
                     "  q = f32[64,32]{1,0} add(y, gb)\n"),
      SizeOptions(2048, 1024));
  EXPECT_FALSE(HasMessage(run, "starts after loop"));
  EXPECT_EQ(CountOccurrences(run.text, "negate("), 0);
}

TEST(TensorSplitter, SumLargerThanEveryResultStaysRefused) {
  // Only the total of g is returned: a 4 KB accumulator would be new memory
  // above the threshold, so the rows of p are not split (a loop over g's
  // columns, which reads p whole, is what remains).
  const std::string module = GramOfRows(
      "  zero = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(g, zero), dimensions={0,1}, to_apply=sum\n");
  const PassRun run = RunPass(kPass, module, SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(run, "dimension 0: g reduces the split dimension but is itself too large"));
  EXPECT_FALSE(HasMessage(run, "split main/p"));
}

TEST(TensorSplitter, LargeSumsAccumulateWhatTheThresholdRefuses) {
  // The memory-limit search's option: the same 4 KB sum is accumulated
  // although no result is as large, because the 8 KB p it replaces is larger.
  exla::Options options = SizeOptions(2048, 1024);
  options.large_sums = true;
  const PassRun run = RunPass(
      kPass,
      GramOfRows("  zero = f32[] constant(0)\n"
                 "  ROOT r = f32[] reduce(g, zero), dimensions={0,1}, to_apply=sum\n"),
      options);
  EXPECT_TRUE(HasMessage(run, "split main/p f32[64,32] (8.2 KB) on dimension 0 of extent 64"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     g.split_body {
    CHECK:     [[PART:[a-z0-9.-]+]] = f32[32,32]{1,0} dot(
    CHECK:     f32[32,32]{1,0} add({{[a-z0-9.-]+}}, [[PART]])
    CHECK:     ENTRY main {
    CHECK-NOT: f32[64,32]{1,0} exponential
  )"));
}

TEST(TensorSplitter, LargeSumsStillRefuseASumAsLargeAsItsSlices) {
  // g = pᵀp of a square p is as large as p: accumulating it would save
  // nothing, so the loop over p's rows stays refused with large sums too.
  exla::Options options = SizeOptions(4096, 2048);
  options.large_sums = true;
  const std::string module = Module(R"(
  x = f32[64,64]{1,0} parameter(0)
  p = f32[64,64]{1,0} exponential(x)
  g = f32[64,64]{1,0} dot(p, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(g, zero), dimensions={0,1}, to_apply=sum
)");
  const PassRun run = RunPass(kPass, module, options);
  EXPECT_TRUE(HasMessage(run, "dimension 0: g reduces the split dimension but is itself too large"));
}

// The difference consumed by `consumer` (an instruction the splitter cannot
// slice), then reduced.
std::string DifferenceConsumedBy(const std::string& consumer) {
  return Module(R"(
  x = f32[64,4]{1,0} parameter(0)
  y = f32[64,4]{1,0} parameter(1)
  idx = s32[8,1]{1,0} parameter(2)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
)" + consumer + R"(
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(c, zero), dimensions={0,1,2}, to_apply=sum
)");
}

TEST(TensorSplitter, GatherRefused) {
  const PassRun run = RunPass(
      kPass,
      DifferenceConsumedBy("  c = f32[8,64,4]{2,1,0} gather(d, idx), offset_dims={1,2}, "
                           "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                           "slice_sizes={1,64,4}"),
      SizeOptions(4096, 2048));
  EXPECT_TRUE(HasMessage(run, "left main/d f32[64,64,4] (65.5 KB) unsplit: dimension 0: c (gather) "
                              "cannot consume slices along dimension 0: the splitter does not "
                              "handle 'gather'"));
  // The oversized difference is still computed whole.
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ENTRY main {\nCHECK: d = f32[64,64,4]{2,1,0} subtract(bx, by)"));
}

TEST(TensorSplitter, CustomCallRefused) {
  const PassRun run = RunPass(
      kPass, DifferenceConsumedBy("  c = f32[64,64,4]{2,1,0} custom-call(d), custom_call_target=\"f\""),
      SizeOptions(4096, 2048));
  EXPECT_TRUE(HasMessage(run, "c (custom-call) cannot consume slices along dimension 0: the "
                              "splitter does not handle 'custom-call'"));
  EXPECT_TRUE(HasMessage(run, "left main/c f32[64,64,4] (65.5 KB) unsplit: dimension 0: c: the "
                              "splitter does not handle 'custom-call'"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: ENTRY main {
    CHECK: d = f32[64,64,4]{2,1,0} subtract(bx, by)
    CHECK: c = f32[64,64,4]{2,1,0} custom-call(d)
  )"));
}

TEST(TensorSplitter, SideEffectingCustomCallRefused) {
  const PassRun run = RunPass(
      kPass,
      DifferenceConsumedBy("  c = f32[64,64,4]{2,1,0} custom-call(d), custom_call_target=\"f\", "
                           "custom_call_has_side_effect=true"),
      SizeOptions(4096, 2048));
  EXPECT_TRUE(HasMessage(run, "c (custom-call) cannot consume slices along dimension 0: it has "
                              "side effects"));
}

TEST(TensorSplitter, OversizedParametersAreInputsNotSplit) {
  // A large input is already in memory; reducing it creates nothing big.
  ExpectUnchanged(kPass, Module(R"(
  x = f32[64,64,4]{2,1,0} parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(x, zero), dimensions={1,2}, to_apply=sum
)"), SizeOptions(4096, 2048));
}

TEST(TensorSplitter, OffsetsPastTwoToThe31UseS64Indices) {
  // 3e9 rows: slice offsets reach 3e9 > 2^31 - 1, so the loop counter, its
  // bound and every dynamic-slice offset are s64 (s32 would wrap silently).
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[3000000000]{0} parameter(0)
  e = f32[3000000000]{0} exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(e, zero), dimensions={0}, to_apply=sum
)"), SizeOptions(1000000000, 400000000));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      r.split_body {
    CHECK:      [[I:[a-z0-9.-]+]] = s64[] get-tuple-element
    CHECK:      s64[] constant(100000000)
    CHECK:      [[OFF:[a-z0-9.-]+]] = s64[] multiply([[I]],
    CHECK:      f32[100000000]{0} dynamic-slice({{.*}}[[OFF]]), dynamic_slice_sizes={100000000}
    CHECK:      r.split_cond {
    CHECK:      s64[] constant(30)
    CHECK-NOT:  s32[]
    CHECK:      ENTRY main {
    CHECK:      s64[] constant(0)
  )"));
  EXPECT_EQ(CountOccurrences(run.text, "s32[]"), 0);
}

TEST(TensorSplitter, OffsetsBelowTwoToThe31KeepS32Indices) {
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[1000000]{0} parameter(0)
  e = f32[1000000]{0} exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(e, zero), dimensions={0}, to_apply=sum
)"), SizeOptions(1000000, 400000));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: s32[] constant(100000)
  )"));
  EXPECT_EQ(CountOccurrences(run.text, "s64[]"), 0);
}

}  // namespace

// An elementwise chain of `n` oversized instructions from a broadcast,
// ending in the program's result (nothing can be split) or in a reduction.
std::string Chain(int n, bool ends_in_reduction) {
  static const char* const kOps[] = {"exponential", "negate", "tanh", "abs"};
  std::string text = "HloModule chain\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                     "  ROOT c = f32[] add(a, b)\n}\n\nENTRY main {\n  p = f32[100]{0} parameter(0)\n"
                     "  v0 = f32[100,100]{1,0} broadcast(p), dimensions={0}\n";
  for (int i = 1; i < n; ++i) {
    const bool last = i == n - 1 && !ends_in_reduction;
    text += std::string(last ? "  ROOT " : "  ") + "v" + std::to_string(i) + " = f32[100,100]{1,0} " +
            kOps[i % 4] + "(v" + std::to_string(i - 1) + ")\n";
  }
  if (ends_in_reduction) {
    text += "  zero = f32[] constant(0)\n  ROOT r = f32[100]{0} reduce(v" + std::to_string(n - 1) +
            ", zero), dimensions={1}, to_apply=add\n";
  }
  return text + "}\n";
}

// Members the splitter's region growths add while it runs on `text`, as its
// record counts them.
int64_t GrowthWork(const std::string& text) {
  return RunPass(kPass, text, SizeOptions(1000, 0)).record.region_members;
}

TEST(TensorSplitter, WorkGrowsLinearlyAlongAChainEndingInTheResult) {
  // Each of the n seeds would grow a region down to the result and fail
  // there: n^2 / 2 members. The pass must see that without growing them.
  const int64_t small = GrowthWork(Chain(1000, false));
  const int64_t large = GrowthWork(Chain(2000, false));
  EXPECT_LE(large, 2 * small + 100) << small << " members for 1000, " << large << " for 2000";
  EXPECT_TRUE(HasMessage(RunPass(kPass, Chain(50, false), SizeOptions(1000, 0)),
                         "left main/v3 f32[100,100] (40.0 KB) unsplit: dimension 0: v49 is the "
                         "computation's result and too large to split"));
}

TEST(TensorSplitter, WorkGrowsLinearlyAlongAChainEndingInAReduction) {
  const int64_t small = GrowthWork(Chain(1000, true));
  const int64_t large = GrowthWork(Chain(2000, true));
  EXPECT_GT(small, 0);
  EXPECT_LE(large, 2 * small + 100) << small << " members for 1000, " << large << " for 2000";
}

TEST(TensorSplitter, GrowthWorkBelongsToOneRun) {
  // The count is the run's own: a second run of the same pass object on the
  // same module reports the same figure, not the sum of both.
  exla::TensorSplitter splitter(1000, 0);
  const std::string text = Chain(100, true);
  const int64_t first = RunPassObject(splitter, text).record.region_members;
  const int64_t second = RunPassObject(splitter, text).record.region_members;
  EXPECT_GT(first, 0);
  EXPECT_EQ(first, second);
}

TEST(TensorSplitter, UnsplitNoteGivesEveryDimensionsReason) {
  // Each dimension of e fails for a reason of its own, and the note names
  // both: rows cannot be split because by_rows sorts along them; columns
  // could be (by_rows sorts each column on its own), but the columns' loop
  // would reach the result tuple still too large.
  const PassRun run = RunPass(kPass, R"(HloModule m

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY main {
  x = f32[64,32]{1,0} parameter(0)
  e = f32[64,32]{1,0} exponential(x)
  by_rows = f32[64,32]{1,0} sort(e), dimensions={0}, to_apply=less
  by_cols = f32[64,32]{1,0} sort(e), dimensions={1}, to_apply=less
  ROOT t = (f32[64,32]{1,0}, f32[64,32]{1,0}) tuple(by_rows, by_cols)
}
)", SizeOptions(4096, 1024));
  EXPECT_TRUE(HasMessage(
      run, "left main/e f32[64,32] (8.2 KB) unsplit: dimension 0: by_rows (sort) cannot consume "
           "slices along dimension 0; dimension 1: t (tuple) cannot consume slices along "
           "dimension 1: the splitter does not handle 'tuple'"));
}
