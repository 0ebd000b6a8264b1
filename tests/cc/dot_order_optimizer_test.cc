// Rules of the dot-order-optimizer pass (cc/passes/dot_order_optimizer.h):
// matrix chains are re-parenthesised to keep intermediates small.
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::PassRun;
using exla_test::RunPass;

constexpr char kPass[] = "dot-order-optimizer";

// (A.B).v: the 64 x 64 product A.B is needed only to multiply v.
constexpr char kMatrixMatrixVector[] = R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(DotOrderOptimizer, MatrixMatrixVectorBecomesTwoMatrixVectorProducts) {
  const PassRun run = RunPass(kPass, kMatrixMatrixVector);
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT:  f32[64,64]{1,0} dot(
    CHECK:      [[BV:[a-z0-9.]+]] = f32[64]{0} dot(b, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    CHECK-NEXT: ROOT {{.*}} = f32[64]{0} dot(a, [[BV]]), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  )"));
}

TEST(DotOrderOptimizer, ReorderIsExplained) {
  EXPECT_TRUE(HasMessage(RunPass(kPass, kMatrixMatrixVector),
                         "chain of 3 factors at r reordered: largest intermediate 4096 elements, "
                         "5.32e+05 flops -> largest intermediate 64 elements, 1.64e+04 flops"));
}

TEST(DotOrderOptimizer, BestOrderLeftAlone) {
  const std::string module = R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  bv = f32[64]{0} dot(b, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(a, bv), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  ExpectUnchanged(kPass, module);
  EXPECT_TRUE(HasMessage(RunPass(kPass, module), "chain of 3 factors at r is already in the best "
                                                 "order"));
}

TEST(DotOrderOptimizer, SingleDotUntouched) {
  // Two factors have one order: not even considered (no message).
  const std::string module = R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  ROOT r = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  ExpectUnchanged(kPass, module);
  EXPECT_TRUE(RunPass(kPass, module).messages.empty());
}

TEST(DotOrderOptimizer, VectorOnTheLeftMultipliesFirst) {
  // u^T.((A.B).C) -> ((u^T.A).B).C: every intermediate a vector.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  u = f32[64]{0} parameter(0)
  a = f32[64,64]{1,0} parameter(1)
  b = f32[64,64]{1,0} parameter(2)
  c = f32[64,64]{1,0} parameter(3)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  abc = f32[64,64]{1,0} dot(ab, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(u, abc), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT:  f32[64,64]{1,0} dot(
    CHECK:      [[UA:[a-z0-9.]+]] = f32[64]{0} dot(u, a)
    CHECK-NEXT: [[UAB:[a-z0-9.]+]] = f32[64]{0} dot([[UA]], b)
    CHECK-NEXT: ROOT {{.*}} = f32[64]{0} dot([[UAB]], c)
  )"));
  EXPECT_TRUE(HasMessage(run, "chain of 4 factors at r reordered"));
}

TEST(DotOrderOptimizer, VectorOnTheLeftOfATransposedProduct) {
  // u^T.(A.B)^T, written as a dot contracting (A.B)'s dimension 1: u has no
  // free dimension of its own (its one dimension is contracted), so the
  // result is a vector and u multiplies B^T first.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  u = f32[64]{0} parameter(0)
  a = f32[64,64]{1,0} parameter(1)
  b = f32[64,64]{1,0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(u, ab), lhs_contracting_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT:  f32[64,64]{1,0} dot(
    CHECK:      [[UB:[a-z0-9.]+]] = f32[64]{0} dot(u, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
    CHECK-NEXT: ROOT {{.*}} = f32[64]{0} dot([[UB]], a), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  )"));
}

TEST(DotOrderOptimizer, RectangularChainIsCostedByItsOwnSizes) {
  // (A.B).v with A 64 x 32, B 32 x 16, v of 16: 2 (64*32*16 + 64*16) =
  // 67,584 flops through a 64 x 16 intermediate, against 2 (32*16 + 64*32)
  // = 5,120 through B.v's 32 elements (two flops per multiply-add).
  EXPECT_TRUE(HasMessage(RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,32]{1,0} parameter(0)
  b = f32[32,16]{1,0} parameter(1)
  v = f32[16]{0} parameter(2)
  ab = f32[64,16]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"), "chain of 3 factors at r reordered: largest intermediate 1024 elements, 6.76e+04 flops -> "
     "largest intermediate 32 elements, 5.12e+03 flops"));
}

TEST(DotOrderOptimizer, TransposeFoldedIntoContractingDims) {
  // (A^T.B).v: the transpose becomes a contracting dimension of the new dot
  // rather than an explicit (possibly materialised) transpose.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  at = f32[64,64]{1,0} transpose(a), dimensions={1,0}
  ab = f32[64,64]{1,0} dot(at, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: transpose(
    CHECK:     [[BV:[a-z0-9.]+]] = f32[64]{0} dot(b, v)
    CHECK:     dot(a, [[BV]]), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  )"));
}

TEST(DotOrderOptimizer, TransposedViewOfATransposeIsReordered) {
  // (A.(B^T)^T).v: the dot contracts B^T's dimension 1, so B^T is read as a
  // transposed view whose column is its dimension 0; through the transpose
  // that column is B's dimension 1. B is a 64 x 64 factor, the chain costs
  // what (A.B).v does, and becomes A.(B.v).
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  bt = f32[64,64]{1,0} transpose(b), dimensions={1,0}
  ab = f32[64,64]{1,0} dot(a, bt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: transpose(
    CHECK:     [[BV:[a-z0-9.]+]] = f32[64]{0} dot(b, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    CHECK:     dot(a, [[BV]]), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  )"));
  EXPECT_TRUE(HasMessage(run, "chain of 3 factors at r reordered: largest intermediate 4096 elements, "
                              "5.32e+05 flops -> largest intermediate 64 elements, 1.64e+04 flops"));
}

TEST(DotOrderOptimizer, ScalarFactorsMoveToTheResult) {
  // -(2 (A.B)).v: the scale and the negation are applied to the final
  // vector instead of to the 64 x 64 intermediate.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[] constant(2)
  btwo = f32[64,64]{1,0} broadcast(two), dimensions={}
  ab2 = f32[64,64]{1,0} multiply(ab, btwo)
  nab = f32[64,64]{1,0} negate(ab2)
  ROOT r = f32[64]{0} dot(nab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[64,64]{1,0} {{multiply|negate|broadcast|dot}}(
    CHECK:     [[BV:[a-z0-9.]+]] = f32[64]{0} dot(b, v)
    CHECK:     [[ABV:[a-z0-9.]+]] = f32[64]{0} dot(a, [[BV]])
    CHECK:     [[NEG:[a-z0-9.]+]] = f32[64]{0} negate([[ABV]])
    CHECK:     [[TWO:[a-z0-9.]+]] = f32[64]{0} broadcast(two), dimensions={}
    CHECK:     ROOT {{.*}} = f32[64]{0} multiply([[NEG]], [[TWO]])
  )"));
}

TEST(DotOrderOptimizer, BatchDimensionsKept) {
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[2,64,64]{2,1,0} parameter(0)
  b = f32[2,64,64]{2,1,0} parameter(1)
  v = f32[2,64,1]{2,1,0} parameter(2)
  ab = f32[2,64,64]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[2,64,1]{2,1,0} dot(ab, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      [[BV:[a-z0-9.]+]] = f32[2,64,1]{2,1,0} dot(b, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
    CHECK-NEXT: ROOT {{.*}} = f32[2,64,1]{2,1,0} dot(a, [[BV]]), lhs_batch_dims={0}
  )"));
}

TEST(DotOrderOptimizer, BatchDimensionOfTheRightOperandIsItsOwn) {
  // v's batch dimension is its dimension 1 (the left operand's is 0): v has
  // no free dimension, so the result is a batch of vectors and (A.B).v
  // becomes A.(B.v), each product keeping its operands' own batch dimensions.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[2,64,64]{2,1,0} parameter(0)
  b = f32[2,64,64]{2,1,0} parameter(1)
  v = f32[64,2]{1,0} parameter(2)
  ab = f32[2,64,64]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[2,64]{1,0} dot(ab, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      [[BV:[a-z0-9.]+]] = f32[2,64]{1,0} dot(b, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
    CHECK-NEXT: ROOT {{.*}} = f32[2,64]{1,0} dot(a, [[BV]]), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  )"));
}

TEST(DotOrderOptimizer, UnitReshapesLookedThrough) {
  // TensorFlow's matmul on a vector: reshape to 64 x 1, dot, reshape back.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  rv = f32[64,1]{1,0} reshape(v)
  d = f32[64,1]{1,0} dot(ab, rv), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} reshape(d)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      [[BV:[a-z0-9.]+]] = f32[64,1]{1,0} dot(b, rv)
    CHECK-NEXT: [[ABV:[a-z0-9.]+]] = f32[64,1]{1,0} dot(a, [[BV]])
    CHECK-NEXT: ROOT r = f32[64]{0} reshape([[ABV]])
  )"));
}

TEST(DotOrderOptimizer, IntermediateUsedElsewhereIsNotReordered) {
  // A.B is also a result: it must be computed anyway, so it is a leaf and
  // the chain (A.B).v has only two factors.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0)
  b = f32[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  abv = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64]{0}, f32[64,64]{1,0}) tuple(abv, ab)
}
)");
}

TEST(DotOrderOptimizer, MixedPrecisionDotIsALeaf) {
  // An f16 x f16 -> f32 product is not part of an f32 chain: reordering
  // would change where the rounding happens.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  a = f16[64,64]{1,0} parameter(0)
  b = f16[64,64]{1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(DotOrderOptimizer, TwoContractingDimensionsNotAChain) {
  // A dot contracting two dimensions per side is not a matrix product.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  a = f32[8,8,64]{2,1,0} parameter(0)
  b = f32[8,8,64]{2,1,0} parameter(1)
  v = f32[64]{0} parameter(2)
  ab = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  ROOT r = f32[64]{0} dot(ab, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

}  // namespace
