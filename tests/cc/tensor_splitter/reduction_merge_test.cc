// The softmax rule of the tensor splitter
// (cc/passes/tensor_splitter/reduction_merge.h), one behaviour per test.
// Logits h @ W of 8 rows x 512 classes (16 KB) from W f32[4,512] (8 KB):
// with a threshold of 8 KB and slices of 2 KB the logits must be split, and
// a loop over rows would read all of W on every trip.
#include <memory>
#include <string>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/reduction_merge.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/softmax_module.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;
using exla_test::ModuleRun;
using exla_test::RunPassObject;
using exla_test::SoftmaxModule;
namespace m = exla::m;

constexpr int64_t kThreshold = 8192;
constexpr int64_t kSplitSize = 2048;

// logsumexp(h @ W) per row, as TensorFlow writes it: max, shift, exp, an f32
// convert, sum, log, and the maximum added back. `shift` is what the
// exponential's argument subtracts (broadcast along the classes).
std::string LogSumExp(const std::string& shift = "mx", const std::string& w_shape = "f32[4,512]",
                      const std::string& extra = "") {
  return SoftmaxModule(R"(
  h = f32[8,4]{1,0} parameter(0)
  w = )" + w_shape + R"({1,0} parameter(1)
  x = f32[8,512]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[8]{0} reduce(x, ninf), dimensions={1}, to_apply=max
)" + extra + R"(
  bm = f32[8,512]{1,0} broadcast()" + shift + R"(), dimensions={0}
  d = f32[8,512]{1,0} subtract(x, bm)
  e = f32[8,512]{1,0} exponential(d)
  c = f32[8,512]{1,0} convert(e)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(c, zero), dimensions={1}, to_apply=sum
  l = f32[8]{0} log(s)
  ROOT lse = f32[8]{0} add(l, mx)
)");
}

std::unique_ptr<exla::HloModule> Parse(const std::string& text) { return exla::ParseHloModule(text); }

exla::HloInstruction* Find(exla::HloModule& module, const std::string& name) {
  return module.entry()->FindInstruction(name);
}

// The rule's answer on the sum `s` of `module`.
exla::WhyNot FindStatistics(exla::HloModule& module, exla::SoftmaxStatistics* statistics,
                            int64_t split_size = kSplitSize) {
  return exla::FindSoftmaxStatistics(Find(module, "s"), kThreshold, split_size,
                                     exla::ShardingAnalysis(), statistics);
}

TEST(ReductionMerge, FindsMaxAndShiftedSumOfTheSameLogits) {
  auto module = Parse(LogSumExp());
  exla::SoftmaxStatistics statistics;
  exla::WhyNot found = FindStatistics(*module, &statistics);
  ASSERT_TRUE(found.ok()) << found.reason();
  EXPECT_EQ(statistics.logits, Find(*module, "x"));
  EXPECT_EQ(statistics.max, Find(*module, "mx"));
  EXPECT_EQ(statistics.shift, Find(*module, "mx"));
  EXPECT_EQ(statistics.dim, 1);
  ASSERT_EQ(statistics.between.size(), 1u);  // TensorFlow's f32 -> f32 convert
  EXPECT_EQ(statistics.between[0], Find(*module, "c"));
  // W is sliced along the classes; h is read whole.
  EXPECT_EQ(statistics.region.exits, std::vector<exla::HloInstruction*>{Find(*module, "mx")});
}

TEST(ReductionMerge, ShiftComputedFromTheMaximumIsAccepted) {
  // jax.nn.logsumexp shifts by max(m, -inf) (a no-op jax writes): a value
  // computed from the maximum and constants alone.
  auto module = Parse(LogSumExp("mj", "f32[4,512]",
                                "  bninf = f32[8]{0} broadcast(ninf), dimensions={}\n"
                                "  mj = f32[8]{0} maximum(mx, bninf)\n"));
  exla::SoftmaxStatistics statistics;
  EXPECT_TRUE(FindStatistics(*module, &statistics).ok());
  EXPECT_EQ(statistics.shift, Find(*module, "mj"));
}

TEST(ReductionMerge, SumFromNegativeZeroIsAccepted) {
  // TensorFlow's softmax sums from -0, the other identity of an f32 add.
  std::string text = LogSumExp();
  text.replace(text.find("zero = f32[] constant(0)"), 24, "zero = f32[] constant(-0)");
  auto module = Parse(text);
  exla::SoftmaxStatistics statistics;
  EXPECT_TRUE(FindStatistics(*module, &statistics).ok());
}

TEST(ReductionMerge, ShiftByAnotherValueIsRefused) {
  // exp(x - t) for a t that is no maximum of x: the running rescaling would
  // not bound the exponentials, so the rule leaves it.
  const std::string text = SoftmaxModule(R"(
  h = f32[8,4]{1,0} parameter(0)
  w = f32[4,512]{1,0} parameter(1)
  t = f32[8]{0} parameter(2)
  x = f32[8,512]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[8]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  bt = f32[8,512]{1,0} broadcast(t), dimensions={0}
  d = f32[8,512]{1,0} subtract(x, bt)
  e = f32[8,512]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(e, zero), dimensions={1}, to_apply=sum
  ROOT r = (f32[8]{0}, f32[8]{0}) tuple(s, mx)
)");
  auto module = Parse(text);
  exla::SoftmaxStatistics statistics;
  exla::WhyNot found = FindStatistics(*module, &statistics);
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.reason().find("subtracts no maximum"), std::string::npos) << found.reason();
}

TEST(ReductionMerge, SmallInputsLeaveTheRowSplit) {
  // Logits from W f32[4,512] with slices of 16 KB: a loop over rows reads
  // nothing larger than a slice, so the rows are split as before.
  auto module = Parse(LogSumExp());
  exla::SoftmaxStatistics statistics;
  exla::WhyNot found = FindStatistics(*module, &statistics, 16384);
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.reason().find("no input larger than the split size"), std::string::npos)
      << found.reason();
}

TEST(ReductionMerge, LogSumExpBecomesOneLoopOverClasses) {
  // The entry keeps no f32[8,512]: one loop yields the maximum and the sum,
  // and the program's log reads the loop's sum times exp(M - M) (= 1).
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, LogSumExp());
  ASSERT_TRUE(run.changed);
  exla::HloInstruction* loop = nullptr;
  exla::HloInstruction* max = nullptr;
  EXPECT_TRUE(exla::Match(
      run.module->entry()->root(),
      m::Add(m::OpWithOpcode(exla::HloOpcode::kLog, m::Multiply(m::GetTupleElement(m::While().Bind(&loop)),
                                m::Exp(m::Subtract(m::GetTupleElement(m::While()).Bind(&max),
                                                   m::Op())))),
             m::Op())));
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(run.module->entry()->root()->operand(1), max);
  for (const auto& instruction : run.module->entry()->instructions()) {
    EXPECT_NE(instruction->shape().ToString(false), "f32[8,512]") << instruction->name();
  }
}

TEST(ReductionMerge, BodyRescalesTheRunningSum) {
  // Chunks of 64 classes (2 KB of logits): W is sliced f32[4,64]; the new
  // maximum shifts the chunk's exponentials and rescales the running sum by
  // exp(M - M'), with M' = -inf replaced by 0 (no NaN from -inf - -inf).
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, LogSumExp());
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      s.merge_cond {
    CHECK:      s32[] constant(8)
    CHECK:      s.merge_body {
    CHECK:      dynamic_slice_sizes={4,64}
    CHECK:      [[X:[a-z0-9.-]+]] = f32[8,64]{1,0} dot(
    CHECK:      [[MC:[a-z0-9.-]+]] = f32[8]{0} reduce([[X]], {{.*}}), dimensions={1}, to_apply=max
    CHECK-DAG:  [[S:[a-z0-9.-]+]] = f32[8]{0} get-tuple-element([[STATE:[a-z0-9.-]+]]), index=2
    CHECK-DAG:  [[M:[a-z0-9.-]+]] = f32[8]{0} get-tuple-element([[STATE]]), index=1
    CHECK:      [[NEW:[a-z0-9.-]+]] = f32[8]{0} maximum([[M]], [[MC]])
    CHECK:      [[ISINF:[a-z0-9.-]+]] = pred[8]{0} compare([[NEW]], {{.*}}), direction=EQ
    CHECK:      [[SHIFT:[a-z0-9.-]+]] = f32[8]{0} select([[ISINF]], {{.*}}, [[NEW]])
    CHECK:      [[B:[a-z0-9.-]+]] = f32[8,64]{1,0} broadcast([[SHIFT]]), dimensions={0}
    CHECK:      [[D:[a-z0-9.-]+]] = f32[8,64]{1,0} subtract([[X]], [[B]])
    CHECK:      [[E:[a-z0-9.-]+]] = f32[8,64]{1,0} exponential([[D]])
    CHECK:      [[C:[a-z0-9.-]+]] = f32[8,64]{1,0} convert([[E]])
    CHECK:      [[SC:[a-z0-9.-]+]] = f32[8]{0} reduce([[C]], {{.*}}), dimensions={1}, to_apply=sum
    CHECK:      [[DM:[a-z0-9.-]+]] = f32[8]{0} subtract([[M]], [[SHIFT]])
    CHECK:      [[SCALE:[a-z0-9.-]+]] = f32[8]{0} exponential([[DM]])
    CHECK:      [[R:[a-z0-9.-]+]] = f32[8]{0} multiply([[S]], [[SCALE]])
    CHECK:      [[NS:[a-z0-9.-]+]] = f32[8]{0} add([[R]], [[SC]])
    CHECK:      ROOT {{.*}} tuple({{[a-z0-9.-]+}}, [[NEW]], [[NS]], {{.*}})
  )"));
}

TEST(ReductionMerge, RemainderChunkGetsItsOwnLoop) {
  // 509 classes (prime) in chunks of at most 64 (2 KB of logits): the first
  // 61 in a one-trip loop, then 7 of 64 in a second loop that starts at 61.
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  std::string text = LogSumExp("mx", "f32[4,509]");
  for (size_t at = text.find("f32[8,512]"); at != std::string::npos; at = text.find("f32[8,512]")) {
    text.replace(at, 10, "f32[8,509]");
  }
  const ModuleRun run = RunPassObject(splitter, text);
  const std::string printed = exla::PrintHloModule(*run.module);
  EXPECT_TRUE(FileCheck(printed, R"(
    CHECK:      s.merge_cond {
    CHECK:      s32[] constant(1)
    CHECK:      s.merge_body {
    CHECK:      dynamic_slice_sizes={4,61}
    CHECK:      s.merge_cond.1 {
    CHECK:      s32[] constant(7)
    CHECK:      s.merge_body.1 {
    CHECK:      s32[] constant(61)
    CHECK:      dynamic_slice_sizes={4,64}
  )")) << printed;
}

// Cross entropy with integer labels and its gradient with respect to the
// logits, as TensorFlow's SparseSoftmaxCrossEntropyWithLogits lowers it:
// log-softmax times the one-hot labels, summed per row, and softmax minus
// the one-hot labels. The one-hot labels are compared with 0 (for the
// loss's 0 * -inf = 0), and are computed exactly, so they are recomputed
// slice by slice too.
const std::string kCrossEntropy = SoftmaxModule(R"(
  h = f32[8,4]{1,0} parameter(0)
  w = f32[4,512]{1,0} parameter(1)
  labels = s32[8]{0} parameter(2)
  x = f32[8,512]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[8]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[8,512]{1,0} broadcast(mx), dimensions={0}
  d = f32[8,512]{1,0} subtract(x, bm)
  e = f32[8,512]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(e, zero), dimensions={1}, to_apply=sum
  l = f32[8]{0} log(s)
  bl = f32[8,512]{1,0} broadcast(l), dimensions={0}
  logp = f32[8,512]{1,0} subtract(d, bl)
  bls = s32[8,512]{1,0} broadcast(labels), dimensions={0}
  iota = s32[8,512]{1,0} iota(), iota_dimension=1
  hot = pred[8,512]{1,0} compare(bls, iota), direction=EQ
  one = f32[] constant(1)
  ones = f32[8,512]{1,0} broadcast(one), dimensions={}
  zeros = f32[8,512]{1,0} broadcast(zero), dimensions={}
  onehot = f32[8,512]{1,0} select(hot, ones, zeros)
  iszero = pred[8,512]{1,0} compare(onehot, zeros), direction=EQ
  terms = f32[8,512]{1,0} select(iszero, zeros, logp)
  nterms = f32[8,512]{1,0} negate(terms)
  loss = f32[8]{0} reduce(nterms, zero), dimensions={1}, to_apply=sum
  bs = f32[8,512]{1,0} broadcast(s), dimensions={0}
  p = f32[8,512]{1,0} divide(e, bs)
  g = f32[8,512]{1,0} subtract(p, onehot)
  dh = f32[8,4]{1,0} dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  dw = f32[4,512]{1,0} dot(h, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = (f32[8]{0}, f32[8,4]{1,0}, f32[4,512]{1,0}) tuple(loss, dh, dw)
)");

TEST(ReductionMerge, CrossEntropyGradientsSplitAlongClassesToo) {
  // The statistics' loop, then one loop over the classes for the loss and
  // both gradients: it writes dW's columns and sums dh. (The one-hot labels'
  // s32 broadcast gets a loop of its own that writes their 4 KB of pred.)
  // Nothing f32 of 8 x 512 is left in the entry, and no loop runs over rows,
  // which would read all of W on every trip.
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, kCrossEntropy);
  ASSERT_TRUE(run.changed);
  for (const auto& instruction : run.module->entry()->instructions()) {
    EXPECT_NE(instruction->shape().ToString(false), "f32[8,512]") << instruction->name();
  }
  ASSERT_GE(run.record.loops.size(), 2u);
  EXPECT_EQ(run.record.loops[0].instruction, "x");
  EXPECT_EQ(run.record.loops[1].instruction, "g");
  for (const exla::SplitLoop& loop : run.record.loops) EXPECT_EQ(loop.dimension, 1);
  const std::string text = exla::PrintHloModule(*run.module);
  EXPECT_TRUE(FileCheck(text, R"(
    CHECK:      s.merge_body {
    CHECK:      dynamic_slice_sizes={4,64}
    CHECK:      .split_body {
    CHECK:      dynamic_slice_sizes={4,64}
    CHECK-DAG:  f32[8,4]{1,0} dot(
    CHECK-DAG:  f32[4,64]{1,0} dot(
    CHECK:      f32[4,512]{1,0} dynamic-update-slice(
  )")) << text;
}

TEST(ReductionMerge, MaximumBehindAReshapeOfUnitDimensionsIsFound) {
  // JAX's attention takes the maximum of its scores before a reshape that
  // moves a dimension of extent 1, and exponentiates them after it: the loop
  // slices the maximum's operand and merges on the logits' slices.
  const std::string text = SoftmaxModule(R"(
  h = f32[8,4]{1,0} parameter(0)
  w = f32[4,512]{1,0} parameter(1)
  x8 = f32[8,512]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x3 = f32[8,1,512]{2,1,0} reshape(x8)
  ninf = f32[] constant(-inf)
  mx = f32[8,1]{1,0} reduce(x3, ninf), dimensions={2}, to_apply=max
  x = f32[1,8,512]{2,1,0} reshape(x3)
  shift = f32[1,8]{1,0} reshape(mx)
  bm = f32[1,8,512]{2,1,0} broadcast(shift), dimensions={0,1}
  d = f32[1,8,512]{2,1,0} subtract(x, bm)
  e = f32[1,8,512]{2,1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[1,8]{1,0} reduce(e, zero), dimensions={2}, to_apply=sum
  ROOT r = (f32[1,8]{1,0}, f32[8,1]{1,0}) tuple(s, mx)
)");
  auto module = Parse(text);
  exla::SoftmaxStatistics statistics;
  exla::WhyNot found = FindStatistics(*module, &statistics);
  ASSERT_TRUE(found.ok()) << found.reason();
  EXPECT_EQ(statistics.logits, Find(*module, "x"));
  EXPECT_EQ(statistics.max, Find(*module, "mx"));
  EXPECT_EQ(statistics.dim, 2);
  EXPECT_EQ(statistics.max_dim, 2);
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, text);
  ASSERT_EQ(run.record.loops.size(), 1u);
  // The program's maximum is the loop's, back in its own shape.
  EXPECT_TRUE(exla::Match(run.module->entry()->root()->operand(1),
                          m::Reshape(m::GetTupleElement(m::While()))))
      << exla::PrintHloModule(*run.module);
  for (const auto& instruction : run.module->entry()->instructions()) {  // no 16 KB of logits
    if (!instruction->shape().IsArray()) continue;
    EXPECT_LT(instruction->shape().ElementCount(), 8 * 512) << instruction->name();
  }
}

TEST(ReductionMerge, SoftmaxOverTheRowsOfATopKSlicesTheTopKsRows) {
  // A softmax down the columns of a top-k's values (16 KB) reads the top-k
  // of 512 rows of logits: the loop slices h's rows (8 rows: 2 KB of
  // logits), and each trip takes the top-k of its chunk of rows, a tuple of values and indices whose
  // shape the body must slice element by element.
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, SoftmaxModule(R"(
  h = f32[512,4]{1,0} parameter(0)
  w = f32[4,64]{1,0} parameter(1)
  x = f32[512,64]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = (f32[512,8]{1,0}, s32[512,8]{1,0}) topk(x), k=8, largest=true
  v = f32[512,8]{1,0} get-tuple-element(t), index=0
  ninf = f32[] constant(-inf)
  mx = f32[8]{0} reduce(v, ninf), dimensions={0}, to_apply=max
  bm = f32[512,8]{1,0} broadcast(mx), dimensions={1}
  d = f32[512,8]{1,0} subtract(v, bm)
  e = f32[512,8]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(e, zero), dimensions={0}, to_apply=sum
  ROOT l = f32[8]{0} log(s)
)"));
  ASSERT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      s.merge_body {
    CHECK:      dynamic_slice_sizes={8,4}
    CHECK:      [[X:[a-z0-9.-]+]] = f32[8,64]{1,0} dot(
    CHECK:      (f32[8,8]{1,0}, s32[8,8]{1,0}) topk([[X]]), k=8
  )"));
}

}  // namespace
