// What the tensor splitter's loops compute a second time (cost.h: a member
// that keeps users outside its loop stays there and the loop recomputes it),
// one rule per test. The module is a sparse GP's gradient at a threshold
// below one M x M matrix, where the memory-limit search turns on large sums.
#include <string>

#include "passes/tensor_splitter/tensor_splitter.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::CountOccurrences;
using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::SizeOptions;

constexpr char kPass[] = "tensor-splitter";

// M = 32 inducing points, N = 128 data points (the dimension the loops run
// over). A = exp(Z Xᵀ) is 16 KB; the forward pass sums it over the data
// into G = A Aᵀ (4 KB) and v = A e; the backward pass computes dA = W A
// from the Cholesky factor W of G and sums it over the data twice: a scaled
// total, and Gw = dA Aᵀ (4 KB, the gradient of a Cholesky factor: the
// program's M x M sums are above a threshold of 2 KB). The scale is a
// broadcast of a parameter, the first oversized value in post order: the
// backward loop grows from it and reaches dA as a producer, so Gw is a
// consumer outside that loop which JoinOtherUsers must bring in.
const char kCholeskyGradient[] = R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  c = f32[] parameter(3)
  bc = f32[32,128]{1,0} broadcast(c), dimensions={}
  z = f32[32,3]{1,0} parameter(0)
  x = f32[128,3]{1,0} parameter(1)
  e = f32[128]{0} parameter(2)
  k = f32[32,128]{1,0} dot(z, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  a = f32[32,128]{1,0} exponential(k)
  g = f32[32,32]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  v = f32[32]{0} dot(a, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w = f32[32,32]{1,0} cholesky(g), lower=true
  da = f32[32,128]{1,0} dot(w, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dk = f32[32,128]{1,0} multiply(da, bc)
  zero = f32[] constant(0)
  r1 = f32[] reduce(dk, zero), dimensions={0,1}, to_apply=sum
  gw = f32[32,32]{1,0} dot(da, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  r2 = f32[32]{0} reduce(gw, zero), dimensions={1}, to_apply=sum
  ROOT out = (f32[32]{0}, f32[], f32[32]{0}) tuple(v, r1, r2)
}
)";

exla::Options LargeSums() {
  exla::Options options = SizeOptions(2048, 1024);
  options.large_sums = true;
  return options;
}

TEST(TensorSplitterRecomputation, LargeSumOverTheDataJoinsTheLoopOfItsOperand) {
  // Gw joins the backward loop as a sum: dA is computed there only, and the
  // loop recomputes nothing but A, which the forward sums need whole first.
  // Left outside, Gw kept dA whole and a third loop over the data computed
  // dA and A again (the backward loop recomputed dA too: 10x the flops).
  const PassRun run = RunPass(kPass, kCholeskyGradient, LargeSums());
  EXPECT_TRUE(HasMessage(run, "split main/bc f32[32,128] (16.4 KB) on dimension 1 of extent 128"));
  EXPECT_TRUE(HasMessage(run, "recomputes a, k (28.7 kFLOP)"));
  EXPECT_FALSE(HasMessage(run, "split main/da"));
  EXPECT_EQ(CountOccurrences(run.text, " while("), 2);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     .split_body {
    CHECK:     [[PART:gw\.[0-9]+]] = f32[32,32]{1,0} dot(da
    CHECK:     f32[32,32]{1,0} add({{[a-z0-9.-]+}}, [[PART]])
    CHECK:     ENTRY main {
    CHECK-NOT: f32[32,128]{1,0} dot(
  )"));
  EXPECT_EQ(run.record.recomputed_flops, 28672);
}

TEST(TensorSplitterRecomputation, WithoutLargeSumsTheSumStaysOutside) {
  // The per-tensor rule holds without the option: Gw, above the threshold
  // and no result of the program, is not accumulated by the backward loop,
  // which then recomputes dA for it.
  const PassRun run = RunPass(kPass, kCholeskyGradient, SizeOptions(2048, 1024));
  EXPECT_TRUE(HasMessage(run, "recomputes a, da, k"));
}

}  // namespace
