// Sums weighted by a softmax, accumulated in the loop of its statistics
// (cc/passes/tensor_splitter/weighted_sums.h, reduction_merge.h), one
// behaviour per test. Attention's forward in miniature: logits h @ W of 8
// rows x 512 keys (16 KB) from W f32[4,512] (8 KB), the output softmax(x) @ v
// with v f32[512,16]; a threshold of 8 KB and slices of 2 KB: 32 keys, v's
// rows of 64 B counting against the slice like the logits' columns.
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/reduction_merge.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "passes/tensor_splitter/weighted_sums.h"
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

// softmax(h @ W) as TensorFlow writes it, then `output` (the lines that
// read p, e and v, ending in ROOT).
std::string Attention(const std::string& output) {
  return SoftmaxModule(R"(
  h = f32[8,4]{1,0} parameter(0)
  w = f32[4,512]{1,0} parameter(1)
  v = f32[512,16]{1,0} parameter(2)
  x = f32[8,512]{1,0} dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[8]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[8,512]{1,0} broadcast(mx), dimensions={0}
  d = f32[8,512]{1,0} subtract(x, bm)
  e = f32[8,512]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(e, zero), dimensions={1}, to_apply=sum
  bs = f32[8,512]{1,0} broadcast(s), dimensions={0}
  p = f32[8,512]{1,0} divide(e, bs)
)" + output);
}

const std::string kOutput = Attention(R"(
  ROOT o = f32[8,16]{1,0} dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");

struct Found {
  std::unique_ptr<exla::HloModule> module;
  std::vector<exla::WeightedSum> sums;
  std::vector<std::string> notes;
};

Found FindSums(const std::string& text, const exla::DimensionChoices& chosen = {}) {
  Found found;
  found.module = exla::ParseHloModule(text);
  exla::SoftmaxStatistics statistics;
  exla::WhyNot why = exla::FindSoftmaxStatistics(found.module->entry()->FindInstruction("s"),
                                                 kThreshold, kSplitSize, exla::ShardingAnalysis(),
                                                 &statistics);
  if (!why.ok()) throw std::runtime_error(why.reason());
  found.sums = exla::FindWeightedSums(statistics, chosen, &found.notes);
  return found;
}

TEST(WeightedSums, SoftmaxOutputIsFound) {
  const Found found = FindSums(kOutput);
  ASSERT_EQ(found.sums.size(), 1u);
  EXPECT_EQ(found.sums[0].dot, found.module->entry()->FindInstruction("o"));
  EXPECT_EQ(found.sums[0].weights_operand, 0);
  EXPECT_TRUE(found.sums[0].normalised);
  EXPECT_EQ(found.sums[0].values_dim, 0);
  EXPECT_TRUE(found.notes.empty());
}

TEST(WeightedSums, SumOfTheExponentialsIsFound) {
  // exp(x - m)·v, normalised later (or never) by the program itself.
  const Found found = FindSums(Attention(R"(
  ROOT o = f32[8,16]{1,0} dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"));
  ASSERT_EQ(found.sums.size(), 1u);
  EXPECT_FALSE(found.sums[0].normalised);
}

TEST(WeightedSums, ConvertedWeightsAreFound) {
  // bf16 attention: the probabilities converted before a bf16 product.
  const Found found = FindSums(Attention(R"(
  pb = bf16[8,512]{1,0} convert(p)
  vb = bf16[512,16]{1,0} convert(v)
  ROOT o = bf16[16,8]{1,0} dot(vb, pb), lhs_contracting_dims={0}, rhs_contracting_dims={1}
)"));
  ASSERT_EQ(found.sums.size(), 1u);
  EXPECT_EQ(found.sums[0].weights_operand, 1);
  EXPECT_EQ(found.sums[0].values_dim, 0);
}

TEST(WeightedSums, ValuesComputedFromTheLogitsAreRefused) {
  // The loop would need all of x before its first slice.
  const Found found = FindSums(Attention(R"(
  xt = f32[512,8]{1,0} transpose(x), dimensions={1,0}
  ROOT o = f32[8,8]{1,0} dot(p, xt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"));
  EXPECT_TRUE(found.sums.empty());
  ASSERT_EQ(found.notes.size(), 1u);
  EXPECT_NE(found.notes[0].find("left o to a second pass over x: xt, which o weighs, is computed "
                                "from the logits"),
            std::string::npos)
      << found.notes[0];
}

TEST(WeightedSums, ContractionOverTheRowsIsNoWeightedSum) {
  // pᵀ·g (attention's dV) sums over the rows: it keeps the keys.
  const Found found = FindSums(Attention(R"(
  g = f32[8,16]{1,0} parameter(3)
  ROOT dv = f32[512,16]{1,0} dot(p, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
)"));
  EXPECT_TRUE(found.sums.empty());
  EXPECT_TRUE(found.notes.empty());
}

TEST(WeightedSums, TwoPassChoiceLeavesTheSumOut) {
  const Found found = FindSums(kOutput, {{"main/o", exla::kTwoPass}});
  EXPECT_TRUE(found.sums.empty());
  EXPECT_TRUE(found.notes.empty());
}

TEST(WeightedSums, OutputComesFromTheStatisticsLoop) {
  // One loop, no second pass over the logits: o is the accumulator times
  // exp(M - M) over the program's sum, and the entry keeps no f32[8,512].
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, kOutput);
  ASSERT_TRUE(run.changed);
  exla::HloInstruction* loop = nullptr;
  EXPECT_TRUE(exla::Match(
      run.module->entry()->root(),
      m::Divide(m::Multiply(m::GetTupleElement(m::While().Bind(&loop)), m::Broadcast()),
                m::Broadcast(m::Multiply(m::GetTupleElement(m::While()), m::Op())))))
      << exla::PrintHloModule(*run.module);
  int loops = 0;
  for (const auto& instruction : run.module->entry()->instructions()) {
    loops += instruction->Is(exla::HloOpcode::kWhile);
    EXPECT_NE(instruction->shape().ToString(false), "f32[8,512]") << instruction->name();
  }
  EXPECT_EQ(loops, 1);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].accumulated, std::vector<std::string>{"o"});
  EXPECT_TRUE(run.record.loops[0].recomputed.empty());  // x is computed in the loop alone
}

TEST(WeightedSums, BodyRescalesTheAccumulator) {
  // Each trip: v's slice of 64 keys, the chunk's exponentials (shifted by the
  // new maximum) times that slice, and the accumulator rescaled by
  // exp(M - M') before the chunk's product is added.
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, kOutput);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      s.merge_body {
    CHECK:      [[M:[a-z0-9.-]+]] = f32[8]{0} get-tuple-element([[STATE:[a-z0-9.-]+]]), index=1
    CHECK:      [[NEW:[a-z0-9.-]+]] = f32[8]{0} maximum([[M]], {{.*}})
    CHECK:      [[SHIFT:[a-z0-9.-]+]] = f32[8]{0} select({{.*}}, {{.*}}, [[NEW]])
    CHECK:      [[E:[a-z0-9.-]+]] = f32[8,32]{1,0} exponential(
    CHECK:      [[SCALE:[a-z0-9.-]+]] = f32[8]{0} exponential(
    CHECK:      [[V:[a-z0-9.-]+]] = f32[512,16]{1,0} get-tuple-element([[STATE]]), index=5
    CHECK:      [[A:[a-z0-9.-]+]] = f32[8,16]{1,0} get-tuple-element([[STATE]]), index=6
    CHECK:      [[VK:[a-z0-9.-]+]] = f32[32,16]{1,0} dynamic-slice([[V]], {{.*}}), dynamic_slice_sizes={32,16}
    CHECK:      [[C:[a-z0-9.-]+]] = f32[8,16]{1,0} dot([[E]], [[VK]]), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    CHECK:      [[B:[a-z0-9.-]+]] = f32[8,16]{1,0} broadcast([[SCALE]]), dimensions={0}
    CHECK:      [[R:[a-z0-9.-]+]] = f32[8,16]{1,0} multiply([[A]], [[B]])
    CHECK:      [[NA:[a-z0-9.-]+]] = f32[8,16]{1,0} add([[R]], [[C]])
    CHECK:      ROOT {{.*}} tuple({{.*}}, [[V]], [[NA]])
  )")) << exla::PrintHloModule(*run.module);
}

TEST(WeightedSums, BfloatOutputAccumulatesInTheSumsType) {
  // The bf16 product's slices are converted to f32 and accumulated there;
  // the output is rounded to bf16 once, after the loop.
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, Attention(R"(
  pb = bf16[8,512]{1,0} convert(p)
  vb = bf16[512,16]{1,0} convert(v)
  ROOT o = bf16[16,8]{1,0} dot(vb, pb), lhs_contracting_dims={0}, rhs_contracting_dims={1}
)"));
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      s.merge_body {
    CHECK:      [[VK:[a-z0-9.-]+]] = bf16[32,16]{1,0} dynamic-slice(
    CHECK:      [[VF:[a-z0-9.-]+]] = f32[32,16]{1,0} convert([[VK]])
    CHECK:      f32[16,8]{1,0} dot([[VF]], {{.*}}), lhs_contracting_dims={0}, rhs_contracting_dims={1}
    CHECK:      ENTRY main {
    CHECK:      [[O:[a-z0-9.-]+]] = f32[16,8]{1,0} divide(
    CHECK:      ROOT {{.*}} = bf16[16,8]{1,0} convert([[O]])
  )")) << exla::PrintHloModule(*run.module);
}

TEST(WeightedSums, RowsInAnotherOrderAreTransposedBeforeTheRescale) {
  // Logits f32[2,4,512]; the output dot(v, p) pairs p's dimension 1 with v's
  // batch and leaves p's dimension 0 last: the per-row rescale f32[2,4] is
  // transposed to [4,2] and broadcast onto dimensions {0,2} of f32[4,16,2].
  const std::string text = SoftmaxModule(R"(
  h = f32[2,4,4]{2,1,0} parameter(0)
  w = f32[4,512]{1,0} parameter(1)
  v = f32[4,512,16]{2,1,0} parameter(2)
  x = f32[2,4,512]{2,1,0} dot(h, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[2,4]{1,0} reduce(x, ninf), dimensions={2}, to_apply=max
  bm = f32[2,4,512]{2,1,0} broadcast(mx), dimensions={0,1}
  d = f32[2,4,512]{2,1,0} subtract(x, bm)
  e = f32[2,4,512]{2,1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[2,4]{1,0} reduce(e, zero), dimensions={2}, to_apply=sum
  bs = f32[2,4,512]{2,1,0} broadcast(s), dimensions={0,1}
  p = f32[2,4,512]{2,1,0} divide(e, bs)
  ROOT o = f32[4,16,2]{2,1,0} dot(v, p), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={2}
)");
  exla::TensorSplitter splitter(kThreshold, kSplitSize);
  const ModuleRun run = RunPassObject(splitter, text);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].accumulated, std::vector<std::string>{"o"});
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      s.merge_body {
    CHECK:      [[T:[a-z0-9.-]+]] = f32[4,2]{1,0} transpose({{.*}}), dimensions={1,0}
    CHECK:      f32[4,16,2]{2,1,0} broadcast([[T]]), dimensions={0,2}
  )")) << exla::PrintHloModule(*run.module);
}

}  // namespace
