// The splitter's cost model (cc/passes/tensor_splitter/cost.h): the arithmetic one
// evaluation of an instruction does, counted as a roofline would (two flops
// per multiply-add). The memory-limit search ranks plans by the work their
// loops repeat, so an opcode counted as free makes an expensive plan look
// cheap: one test per rule.
#include "passes/tensor_splitter/cost.h"

#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "tests/cc/test_harness.h"

namespace {

// The flops of instruction `op` in a module whose entry is `body`.
int64_t FlopsOf(const std::string& body) {
  std::unique_ptr<exla::HloModule> module =
      exla::ParseHloModule("HloModule m\n\nENTRY main {\n" + body + "}\n");
  return exla::InstructionFlops(*module->entry()->FindInstruction("op"));
}

TEST(SplitCost, DotCountsTwoPerMultiplyAdd) {
  // 30 x 50 results, each a sum of 40 products.
  EXPECT_EQ(FlopsOf("  a = f32[30,40] parameter(0)\n  b = f32[40,50] parameter(1)\n"
                    "  ROOT op = f32[30,50] dot(a, b), lhs_contracting_dims={1}, "
                    "rhs_contracting_dims={0}\n"),
            2 * 30 * 50 * 40);
}

TEST(SplitCost, ElementwiseCountsOnePerElement) {
  EXPECT_EQ(FlopsOf("  a = f32[30,40] parameter(0)\n  ROOT op = f32[30,40] exponential(a)\n"),
            30 * 40);
}

TEST(SplitCost, DataMovementIsFree) {
  EXPECT_EQ(FlopsOf("  a = f32[30,40] parameter(0)\n"
                    "  ROOT op = f32[40,30] transpose(a), dimensions={1,0}\n"),
            0);
}

TEST(SplitCost, TriangularSolveCostsTheTriangleOncePerRightHandSide) {
  // A 100 x 100 triangle against 700 right-hand sides: 100^2 per column. In
  // a sparse GP's gradient this is the work a second pass over the data
  // repeats; counted as free, a plan that repeats it would look free too.
  EXPECT_EQ(FlopsOf("  l = f64[100,100] parameter(0)\n  b = f64[100,700] parameter(1)\n"
                    "  ROOT op = f64[100,700] triangular-solve(l, b), left_side=true, "
                    "lower=true, transpose_a=NO_TRANSPOSE\n"),
            int64_t{100} * 100 * 700);
  // The right-side form: b is k x n.
  EXPECT_EQ(FlopsOf("  l = f64[100,100] parameter(0)\n  b = f64[700,100] parameter(1)\n"
                    "  ROOT op = f64[700,100] triangular-solve(l, b), lower=true, "
                    "transpose_a=TRANSPOSE\n"),
            int64_t{100} * 100 * 700);
}

TEST(SplitCost, CholeskyCostsAThirdOfTheCube) {
  EXPECT_EQ(FlopsOf("  a = f64[2,90,90] parameter(0)\n"
                    "  ROOT op = f64[2,90,90] cholesky(a), lower=true\n"),
            2 * 90 * 90 * 90 / 3);
}

TEST(SplitCost, ConvolutionSumsOverWindowAndInputFeatures) {
  // 8 images of 30 x 30 with 16 features, a 3 x 3 kernel to 32 features:
  // every output element sums 3 x 3 x 16 products.
  EXPECT_EQ(FlopsOf("  x = f32[8,32,32,16] parameter(0)\n  k = f32[3,3,16,32] parameter(1)\n"
                    "  ROOT op = f32[8,30,30,32] convolution(x, k), window={size=3x3}, "
                    "dim_labels=b01f_01io->b01f\n"),
            int64_t{2} * 8 * 30 * 30 * 32 * 3 * 3 * 16);
}

}  // namespace
