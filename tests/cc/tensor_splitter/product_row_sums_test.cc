// The row sum of a matrix product times weights, read from the program's
// own product of the weights (cc/passes/tensor_splitter/product_row_sums.h),
// one behaviour per test, on attention's backward pass as TensorFlow and JAX
// write it: 2 heads x 64 queries x 64 keys of f32 scores (32 KB), heads of
// 8, a threshold of 8 KB.
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/product_row_sums.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/softmax_module.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;
using exla_test::SoftmaxModule;
namespace m = exla::m;

constexpr int64_t kThreshold = 8192;

// softmax(q kᵀ) as TensorFlow writes it, heads x queries x keys.
const char kTfSoftmax[] = R"(
  q = f32[2,64,8]{2,1,0} parameter(0)
  k = f32[2,64,8]{2,1,0} parameter(1)
  v = f32[2,64,8]{2,1,0} parameter(2)
  g = f32[2,64,8]{2,1,0} parameter(3)
  s = f32[2,64,64]{2,1,0} dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  ninf = f32[] constant(-inf)
  mx = f32[2,64]{1,0} reduce(s, ninf), dimensions={2}, to_apply=max
  bm = f32[2,64,64]{2,1,0} broadcast(mx), dimensions={0,1}
  d = f32[2,64,64]{2,1,0} subtract(s, bm)
  e = f32[2,64,64]{2,1,0} exponential(d)
  zero = f32[] constant(0)
  l = f32[2,64]{1,0} reduce(e, zero), dimensions={2}, to_apply=sum
  bl = f32[2,64,64]{2,1,0} broadcast(l), dimensions={0,1}
  p = f32[2,64,64]{2,1,0} divide(e, bl)
)";

// The forward's output o = p v and the backward's rowsum(dP ∘ p), dP = g vᵀ;
// `o` replaces the output.
std::string TfBackward(const std::string& o = "f32[2,64,8]{2,1,0} dot(p, v), lhs_batch_dims={0}, "
                                              "lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                              "rhs_contracting_dims={1}") {
  return SoftmaxModule(std::string(kTfSoftmax) + "  o = " + o + R"(
  dp = f32[2,64,64]{2,1,0} dot(g, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  dpp = f32[2,64,64]{2,1,0} multiply(dp, p)
  r = f32[2,64]{1,0} reduce(dpp, zero), dimensions={2}, to_apply=sum
  ROOT out = (f32[2,64,8]{2,1,0}, f32[2,64]{1,0}) tuple(o, r)
)");
}

// JAX's form (jax.nn.dot_product_attention, implementation="xla"): scores
// batch x 1 x heads x queries x keys behind reshapes of unit dimensions, the
// output dot(v, p) with p on the right, and the backward's row sum of
// dP / l² ∘ e (the derivative of e / l), dP reshaped from another layout.
const std::string kJaxBackward = SoftmaxModule(R"(
  q = f32[1,64,2,8]{3,2,1,0} parameter(0)
  k = f32[1,64,2,8]{3,2,1,0} parameter(1)
  v = f32[1,64,2,8]{3,2,1,0} parameter(2)
  g = f32[1,64,2,8]{3,2,1,0} parameter(3)
  qr = f32[1,64,2,1,8]{4,3,2,1,0} reshape(q)
  s5 = f32[1,2,64,1,64]{4,3,2,1,0} dot(qr, k), lhs_batch_dims={0,2}, lhs_contracting_dims={4}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  x = f32[1,1,2,64,64]{4,3,2,1,0} reshape(s5)
  ninf = f32[] constant(-inf)
  mx = f32[1,1,2,64]{3,2,1,0} reduce(x, ninf), dimensions={4}, to_apply=max
  bm = f32[1,1,2,64,64]{4,3,2,1,0} broadcast(mx), dimensions={0,1,2,3}
  d = f32[1,1,2,64,64]{4,3,2,1,0} subtract(x, bm)
  e = f32[1,1,2,64,64]{4,3,2,1,0} exponential(d)
  zero = f32[] constant(0)
  l = f32[1,1,2,64]{3,2,1,0} reduce(e, zero), dimensions={4}, to_apply=sum
  bl = f32[1,1,2,64,64]{4,3,2,1,0} broadcast(l), dimensions={0,1,2,3}
  p = f32[1,1,2,64,64]{4,3,2,1,0} divide(e, bl)
  o = f32[1,2,8,1,64]{4,3,2,1,0} dot(v, p), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={1,2}, rhs_contracting_dims={4}
  gr = f32[1,1,64,2,8]{4,3,2,1,0} reshape(g)
  gt = f32[1,2,8,1,64]{4,3,2,1,0} transpose(gr), dimensions={1,3,4,0,2}
  dp5 = f32[1,2,1,64,64]{4,3,2,1,0} dot(gt, v), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  dp = f32[1,1,2,64,64]{4,3,2,1,0} reshape(dp5)
  one = f32[] constant(1)
  ones = f32[1,1,2,64]{3,2,1,0} broadcast(one), dimensions={}
  ll = f32[1,1,2,64]{3,2,1,0} multiply(l, l)
  inv = f32[1,1,2,64]{3,2,1,0} divide(ones, ll)
  binv = f32[1,1,2,64,64]{4,3,2,1,0} broadcast(inv), dimensions={0,1,2,3}
  t = f32[1,1,2,64,64]{4,3,2,1,0} multiply(dp, binv)
  u = f32[1,1,2,64,64]{4,3,2,1,0} multiply(t, e)
  r = f32[1,1,2,64]{3,2,1,0} reduce(u, zero), dimensions={4}, to_apply=sum
  ROOT out = (f32[1,2,8,1,64]{4,3,2,1,0}, f32[1,1,2,64]{3,2,1,0}) tuple(o, r)
)");

struct Rewritten {
  std::unique_ptr<exla::HloModule> module;
  bool changed = false;
  std::vector<std::string> notes;
};

Rewritten Rewrite(const std::string& text) {
  Rewritten run;
  run.module = exla::ParseHloModule(text);
  run.changed = exla::RewriteProductRowSums(run.module->entry(), kThreshold, &run.notes);
  return run;
}

// The row sum's replacement: what the root's second element now is.
exla::HloInstruction* RowSum(const Rewritten& run) { return run.module->entry()->root()->operand(1); }

// The rule's one note on `text`, which it must leave unchanged.
std::string Refusal(const std::string& text) {
  const Rewritten run = Rewrite(text);
  if (run.changed) return "rewritten";
  if (run.notes.size() != 1) return std::to_string(run.notes.size()) + " notes";
  return run.notes[0];
}

TEST(ProductRowSums, TensorFlowRowSumReadsTheForwardOutput) {
  // rowsum(dP ∘ p) = rowsum(g ∘ o): the sum over the keys becomes one over
  // the head's 8 elements, and the shared division by l cancels.
  const Rewritten run = Rewrite(TfBackward());
  ASSERT_TRUE(run.changed);
  exla::HloInstruction* o = run.module->entry()->FindInstruction("o");
  exla::HloInstruction* g = run.module->entry()->FindInstruction("g");
  EXPECT_TRUE(exla::Match(RowSum(run), m::Reduce(m::Multiply(m::Reshape(m::Op().WithPredicate(
                                                                 [&](auto* h) { return h == g; })),
                                                             m::Op().WithPredicate(
                                                                 [&](auto* h) { return h == o; })),
                                                 m::ConstantScalar())))
      << exla::PrintHloModule(*run.module);
  EXPECT_EQ(RowSum(run)->dimensions(), std::vector<int64_t>{2});
  EXPECT_TRUE(run.notes.empty());
}

TEST(ProductRowSums, JaxRowSumAlignsTheRowsAndKeepsTheRowFactors) {
  // g in the product's row order (batch, heads, queries; its head elements
  // last), o transposed to the same order, and the per-row factors: the
  // product's 1/l² times the l that p divides by.
  const Rewritten run = Rewrite(kJaxBackward);
  ASSERT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*run.module), R"(
    CHECK:      [[GT:[a-z0-9.-]+]] = f32[1,2,1,64,8]{4,3,2,1,0} transpose(gt), dimensions={0,1,3,4,2}
    CHECK:      [[GR:[a-z0-9.-]+]] = f32[1,1,2,64,8]{4,3,2,1,0} reshape([[GT]])
    CHECK:      [[OT:[a-z0-9.-]+]] = f32[1,1,2,64,8]{4,3,2,1,0} transpose(o), dimensions={3,0,1,4,2}
    CHECK:      [[M:[a-z0-9.-]+]] = f32[1,1,2,64,8]{4,3,2,1,0} multiply([[GR]], [[OT]])
    CHECK:      [[R:[a-z0-9.-]+]] = f32[1,1,2,64]{3,2,1,0} reduce([[M]], {{.*}}), dimensions={4}, to_apply=sum
    CHECK:      [[INV:[a-z0-9.-]+]] = f32[1,1,2,64]{3,2,1,0} broadcast(inv), dimensions={0,1,2,3}
    CHECK:      [[RI:[a-z0-9.-]+]] = f32[1,1,2,64]{3,2,1,0} multiply([[R]], [[INV]])
    CHECK:      [[L:[a-z0-9.-]+]] = f32[1,1,2,64]{3,2,1,0} broadcast(l), dimensions={0,1,2,3}
    CHECK:      [[RL:[a-z0-9.-]+]] = f32[1,1,2,64]{3,2,1,0} multiply([[RI]], [[L]])
    CHECK:      ROOT out = {{.*}} tuple(o, [[RL]])
  )")) << exla::PrintHloModule(*run.module);
}

TEST(ProductRowSums, WithoutTheForwardProductTheSumIsKept) {
  // The output multiplies p with other values: rowsum(dP ∘ p) would need a
  // product p·v the program does not have, and a new one is a pass over the
  // scores again.
  const std::string note = Refusal(TfBackward(
      "f32[2,64,8]{2,1,0} dot(p, g), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_batch_dims={0}, rhs_contracting_dims={1}"));
  EXPECT_NE(note.find("kept the row sum r over the scores dp: the program computes no "
                      "product of the same weights with v"),
            std::string::npos)
      << note;
}

TEST(ProductRowSums, OtherWeightsAreRefused) {
  // rowsum(dP ∘ p ∘ p): the weights p² are not those of the output p·v.
  std::string text = TfBackward();
  const std::string product = "  dpp = f32[2,64,64]{2,1,0} multiply(dp, p)";
  text.replace(text.find(product), product.size(),
               "  pp = f32[2,64,64]{2,1,0} multiply(p, p)\n"
               "  dpp = f32[2,64,64]{2,1,0} multiply(dp, pp)");
  const std::string note = Refusal(text);
  EXPECT_NE(note.find("3 factors that vary along the sum"), std::string::npos) << note;
}

TEST(ProductRowSums, LessPreciseOutputIsRefused) {
  // dP accumulated to f32 from bf16 values, the output stored in bf16: the
  // right side would round to bf16 what the program sums in f32.
  const std::string text = SoftmaxModule(std::string(kTfSoftmax) + R"(
  vb = bf16[2,64,8]{2,1,0} convert(v)
  gb = bf16[2,64,8]{2,1,0} convert(g)
  pb = bf16[2,64,64]{2,1,0} convert(p)
  o = bf16[2,64,8]{2,1,0} dot(pb, vb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  dp = f32[2,64,64]{2,1,0} dot(gb, vb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  dpp = f32[2,64,64]{2,1,0} multiply(dp, p)
  r = f32[2,64]{1,0} reduce(dpp, zero), dimensions={2}, to_apply=sum
  ROOT out = (bf16[2,64,8]{2,1,0}, f32[2,64]{1,0}) tuple(o, r)
)");
  const std::string note = Refusal(text);
  EXPECT_NE(note.find("o is stored less precisely than dp"), std::string::npos) << note;
}

TEST(ProductRowSums, BatchDimensionsPairedWithOtherRowsAreRefused) {
  // Two batch dimensions of the same extent, swapped between dP and the
  // output: o's rows are not the rows the sum runs over.
  const std::string text = SoftmaxModule(R"(
  p = f32[2,2,16,64]{3,2,1,0} parameter(0)
  v = f32[2,2,64,8]{3,2,1,0} parameter(1)
  g = f32[2,2,16,8]{3,2,1,0} parameter(2)
  o = f32[2,2,16,8]{3,2,1,0} dot(p, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,0}, rhs_contracting_dims={2}
  dp = f32[2,2,16,64]{3,2,1,0} dot(g, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  dpp = f32[2,2,16,64]{3,2,1,0} multiply(dp, p)
  zero = f32[] constant(0)
  r = f32[2,2,16]{2,1,0} reduce(dpp, zero), dimensions={3}, to_apply=sum
  ROOT out = (f32[2,2,16,8]{3,2,1,0}, f32[2,2,16]{2,1,0}) tuple(o, r)
)");
  const std::string note = Refusal(text);
  EXPECT_NE(note.find("pair the batch dimensions of v with other rows"), std::string::npos) << note;
}

TEST(ProductRowSums, OutputOverAllHeadsIsNotTheRowsProduct) {
  // p·v without batch dimensions pairs every head's p with every head's v
  // (f32[2,64,2,8]): no product over the rows the sum runs over.
  std::string text = TfBackward(
      "f32[2,64,2,8]{3,2,1,0} dot(p, v), lhs_contracting_dims={2}, rhs_contracting_dims={1}");
  const std::string root = "(f32[2,64,8]{2,1,0}, f32[2,64]{1,0})";
  text.replace(text.find(root), root.size(), "(f32[2,64,2,8]{3,2,1,0}, f32[2,64]{1,0})");
  const std::string note = Refusal(text);
  EXPECT_NE(note.find("the program computes no product of the same weights with v"),
            std::string::npos)
      << note;
}

TEST(ProductRowSums, SmallProductsAreLeftAlone) {
  // 32 KB of scores under a threshold of 64 KB: nothing to save, no note.
  auto module = exla::ParseHloModule(TfBackward());
  std::vector<std::string> notes;
  EXPECT_FALSE(exla::RewriteProductRowSums(module->entry(), 65536, &notes));
  EXPECT_TRUE(notes.empty());
}

TEST(ProductRowSums, RefusalReachesThePassLog) {
  // The splitter runs the rule first and logs what it kept, and why.
  exla::Options options;
  options.tensor_size_threshold = kThreshold;
  const exla_test::PassRun run = exla_test::RunPass(
      "tensor-splitter",
      TfBackward("f32[2,64,8]{2,1,0} dot(p, g), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                 "rhs_batch_dims={0}, rhs_contracting_dims={1}"),
      options);
  bool logged = false;
  for (const std::string& message : run.messages) {
    logged |= message.find("kept the row sum r over the scores dp") != std::string::npos;
  }
  EXPECT_TRUE(logged);
}

}  // namespace
