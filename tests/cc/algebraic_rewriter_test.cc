// Rules of the algebraic-rewriter pass (cc/passes/algebraic_rewriter.h), one
// per test, each on a short hand-written module.
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

constexpr char kPass[] = "algebraic-rewriter";

// The squared-distance expansion changes results beyond the program's own
// rounding, so it only runs with fast_math; the tests of its rules ask for it.
exla::Options FastMath(exla::Options options = exla::Options()) {
  options.fast_math = true;
  return options;
}

// A module with an f32 add reducer `sum` and the given entry body.
std::string Module(const std::string& entry) {
  return "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n" +
         entry + "}\n";
}

// sum_r (x[i, r] - y[j, r])^2 with d = 32 features: the n x m x d tensor is
// 32x the result, so the expansion pays.
const std::string kDistance = Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)");

// The expansion |x|^2 + |y|^2 - 2 x.y^T, clamped at zero.
constexpr char kExpandedDistanceChecks[] = R"(
  CHECK-NOT: f32[16,16,32]
  CHECK-DAG: [[XX:[a-z0-9.]+]] = f32[16,32]{1,0} multiply(x, x)
  CHECK-DAG: [[YY:[a-z0-9.]+]] = f32[16,32]{1,0} multiply(y, y)
  CHECK-DAG: [[NX:[a-z0-9.]+]] = f32[16]{0} reduce([[XX]], {{.*}}), dimensions={1}, to_apply=sum
  CHECK-DAG: [[NY:[a-z0-9.]+]] = f32[16]{0} reduce([[YY]], {{.*}}), dimensions={1}, to_apply=sum
  CHECK-DAG: [[DOT:[a-z0-9.]+]] = f32[16,16]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  CHECK-DAG: [[TWICE:[a-z0-9.]+]] = f32[16,16]{1,0} multiply({{[a-z0-9.]+}}, [[DOT]])
  CHECK:     [[DIFF:[a-z0-9.]+]] = f32[16,16]{1,0} subtract({{[a-z0-9.]+}}, [[TWICE]])
  CHECK:     ROOT {{.*}} = f32[16,16]{1,0} maximum([[DIFF]], {{.*}})
)";

TEST(AlgebraicRewriter, SquaredDistanceLeftAloneWithoutFastMath) {
  // Accuracy first: without fast_math the distance stays a sum of squared
  // differences, and the note says why and how to allow the expansion.
  ExpectUnchanged(kPass, kDistance);
  EXPECT_TRUE(HasMessage(RunPass(kPass, kDistance),
                         "left alone: the expansion |x|^2 + |y|^2 - 2 x.y loses digits where x "
                         "is close to y"));
  EXPECT_TRUE(HasMessage(RunPass(kPass, kDistance), "fast_math=True (--exla_fast_math)"));
}

TEST(AlgebraicRewriter, SquaredDistanceMultiplyFormBecomesDot) {
  const PassRun run = RunPass(kPass, kDistance, FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, kExpandedDistanceChecks));
}

TEST(AlgebraicRewriter, SquaredDistancePowerFormBecomesDot) {
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  two = f32[] constant(2)
  btwo = f32[16,16,32]{2,1,0} broadcast(two), dimensions={}
  sq = f32[16,16,32]{2,1,0} power(d, btwo)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, kExpandedDistanceChecks));
}

TEST(AlgebraicRewriter, PowerWithOtherExponentIsNotASquare) {
  ExpectUnchanged(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  three = f32[] constant(3)
  bthree = f32[16,16,32]{2,1,0} broadcast(three), dimensions={}
  cube = f32[16,16,32]{2,1,0} power(d, bthree)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(cube, zero), dimensions={2}, to_apply=sum
)"));
}

TEST(AlgebraicRewriter, ReversedDifferenceAndNegateUnderSquare) {
  // (y - x) and -(x - y) square to the same value: still a distance.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(by, bx)
  n = f32[16,16,32]{2,1,0} negate(d)
  sq = f32[16,16,32]{2,1,0} multiply(n, n)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,32]
    CHECK:     [[DOT:[a-z0-9.]+]] = f32[16,16]{1,0} dot(y, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
    CHECK:     ROOT {{.*}} maximum(
  )"));
}

TEST(AlgebraicRewriter, DotTransposedIntoResultOrder) {
  // With y - x the dot is y.x^T, indexed [j, i]; the result is [i, j], so
  // the dot is transposed (a broadcast cannot reorder dimensions).
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(by, bx)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: [[DOT:[a-z0-9.]+]] = f32[16,16]{1,0} dot(y, x)
    CHECK: [[T:[a-z0-9.]+]] = f32[16,16]{1,0} transpose([[DOT]]), dimensions={1,0}
    CHECK: multiply({{[a-z0-9.]+}}, [[T]])
  )"));
}

TEST(AlgebraicRewriter, SquaredDistanceWithBatchDimension) {
  // x and y share a leading batch dimension: the dot gets batch dims.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[2,16,32]{2,1,0} parameter(0)
  y = f32[2,16,32]{2,1,0} parameter(1)
  bx = f32[2,16,16,32]{3,2,1,0} broadcast(x), dimensions={0,1,3}
  by = f32[2,16,16,32]{3,2,1,0} broadcast(y), dimensions={0,2,3}
  d = f32[2,16,16,32]{3,2,1,0} subtract(bx, by)
  sq = f32[2,16,16,32]{3,2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[2,16,16]{2,1,0} reduce(sq, zero), dimensions={3}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[2,16,16,32]
    CHECK: f32[2,16,16]{2,1,0} dot(x, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
    CHECK: ROOT {{.*}} = f32[2,16,16]{2,1,0} maximum(
  )"));
}

TEST(AlgebraicRewriter, ScaleAfterSubtractionMovesOntoOperands) {
  // ((x - y) / l)^2 with per-feature lengthscales l: l is applied to x and y
  // (16 x 32) instead of to the 16 x 16 x 32 difference.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  l = f32[32]{0} parameter(2)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  bl = f32[16,16,32]{2,1,0} broadcast(l), dimensions={2}
  ds = f32[16,16,32]{2,1,0} divide(d, bl)
  sq = f32[16,16,32]{2,1,0} multiply(ds, ds)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,32]
    CHECK-DAG: [[LX:[a-z0-9.]+]] = f32[16,32]{1,0} broadcast(l), dimensions={1}
    CHECK-DAG: [[SX:[a-z0-9.]+]] = f32[16,32]{1,0} divide(x, [[LX]])
    CHECK-DAG: [[LY:[a-z0-9.]+]] = f32[16,32]{1,0} broadcast(l), dimensions={1}
    CHECK-DAG: [[SY:[a-z0-9.]+]] = f32[16,32]{1,0} divide(y, [[LY]])
    CHECK:     dot([[SX]], [[SY]])
    CHECK:     ROOT {{.*}} maximum(
  )"));
}

TEST(AlgebraicRewriter, ScaleBeforeBroadcastNeedsNothingSpecial) {
  // x / l broadcast: the broadcast operands are simply the scaled inputs.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  l = f32[32]{0} parameter(2)
  lx = f32[16,32]{1,0} broadcast(l), dimensions={1}
  sx = f32[16,32]{1,0} divide(x, lx)
  sy = f32[16,32]{1,0} divide(y, lx)
  bx = f32[16,16,32]{2,1,0} broadcast(sx), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(sy), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,32]
    CHECK: dot(sx, sy), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  )"));
}

// A weight applied after the square: sum_r w_r (x_r - y_r)^2.
std::string WeightedDistance(const std::string& weight_definition) {
  return Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  p = f32[32]{0} parameter(2)
)" + weight_definition + R"(
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  bw = f32[16,16,32]{2,1,0} broadcast(w), dimensions={2}
  wsq = f32[16,16,32]{2,1,0} multiply(sq, bw)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(wsq, zero), dimensions={2}, to_apply=sum
)");
}

TEST(AlgebraicRewriter, NonNegativeWeightFoldedAndClamped) {
  const PassRun run = RunPass(kPass, WeightedDistance("  w = f32[32]{0} exponential(p)"), FastMath());
  EXPECT_TRUE(run.changed);
  // The weight multiplies the squared norms and one side of the dot.
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,32]
    CHECK-DAG: [[WX:[a-z0-9.]+]] = f32[16,32]{1,0} multiply(x, {{broadcast[.0-9]*}})
    CHECK-DAG: dot([[WX]], y)
    CHECK:     ROOT {{.*}} maximum(
  )"));
}

// The expansion without its clamp at zero.
constexpr char kNotClampedChecks[] = R"(
    CHECK-NOT: f32[16,16,32]
    CHECK:     ROOT {{.*}} = f32[16,16]{1,0} subtract(
    CHECK-NOT: maximum(
  )";

TEST(AlgebraicRewriter, WeightOfUnknownSignIsNotClamped) {
  // With w = -p the original sum can be negative: no maximum(., 0).
  const PassRun run = RunPass(kPass, WeightedDistance("  w = f32[32]{0} negate(p)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, kNotClampedChecks));
}

TEST(AlgebraicRewriter, SignProofStopsAtItsDepthBound) {
  // exp(p) + 1 + 1 ... nine additions deep: the proof that the weight is not
  // negative gives up below depth 8 (each operand, left as well as right, is
  // one level deeper), so the weight counts as of unknown sign: no clamp.
  std::string chain = "  a0 = f32[32]{0} exponential(p)\n  one = f32[] constant(1)\n"
                      "  ones = f32[32]{0} broadcast(one), dimensions={}\n";
  for (int i = 1; i <= 8; ++i) {
    chain += "  a" + std::to_string(i) + " = f32[32]{0} add(a" + std::to_string(i - 1) + ", ones)\n";
  }
  const PassRun run = RunPass(kPass, WeightedDistance(chain + "  w = f32[32]{0} add(a8, ones)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, kNotClampedChecks));
}

TEST(AlgebraicRewriter, LooksThroughWideningConvert) {
  // The difference computed in f16 and widened to f32 before the square.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f16[16,32]{1,0} parameter(0)
  y = f16[16,32]{1,0} parameter(1)
  bx = f16[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f16[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f16[16,16,32]{2,1,0} subtract(bx, by)
  wide = f32[16,16,32]{2,1,0} convert(d)
  sq = f32[16,16,32]{2,1,0} multiply(wide, wide)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: [16,16,32]
    CHECK-DAG: [[CX:[a-z0-9.]+]] = f32[16,32]{1,0} convert(x)
    CHECK-DAG: [[CY:[a-z0-9.]+]] = f32[16,32]{1,0} convert(y)
    CHECK:     dot([[CX]], [[CY]])
  )"));
}

TEST(AlgebraicRewriter, FewFeaturesBelowShrinkFactorLeftAlone) {
  // d = 4: the big tensor is only 4x the result, under the 8x rule.
  const std::string module = Module(R"(
  x = f32[16,4]{1,0} parameter(0)
  y = f32[16,4]{1,0} parameter(1)
  bx = f32[16,16,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,4]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,4]{2,1,0} subtract(bx, by)
  sq = f32[16,16,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)");
  ExpectUnchanged(kPass, module);
  EXPECT_TRUE(HasMessage(RunPass(kPass, module),
                         "squared distance at r left alone: it removes 4.1 KB but needs 1.0 KB "
                         "(less than 8x smaller)"));
}

TEST(AlgebraicRewriter, EightFeaturesIsEnough) {
  // The boundary of the 8x rule: d = 8 is rewritten.
  const PassRun run = RunPass(kPass, Module(R"(
  x = f32[16,8]{1,0} parameter(0)
  y = f32[16,8]{1,0} parameter(1)
  bx = f32[16,16,8]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,8]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,8]{2,1,0} subtract(bx, by)
  sq = f32[16,16,8]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)"), FastMath());
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: dot(x, y)"));
}

TEST(AlgebraicRewriter, WithinSizeThresholdLeftAlone) {
  // The 32 KiB difference fits under a 64 KiB threshold: the program stays.
  const exla::Options options = exla_test::SizeOptions(64 * 1024, 0);
  ExpectUnchanged(kPass, kDistance, options);
  EXPECT_TRUE(HasMessage(RunPass(kPass, kDistance, options),
                         "squared distance at r left alone: 32.8 KB is within the size threshold"));
}

TEST(AlgebraicRewriter, AboveSizeThresholdRewritten) {
  const PassRun run = RunPass(kPass, kDistance, FastMath(exla_test::SizeOptions(16 * 1024, 0)));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: dot(x, y)"));
}

TEST(AlgebraicRewriter, SharedIntermediateLeftAlone) {
  // The difference is also a result: the big tensor stays alive anyway.
  const std::string module = Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  ROOT t = (f32[16,16]{1,0}, f32[16,16,32]{2,1,0}) tuple(r, d)
)");
  ExpectUnchanged(kPass, module);
  EXPECT_TRUE(HasMessage(RunPass(kPass, module),
                         "squared distance at r left alone: its intermediates have other users"));
}

TEST(AlgebraicRewriter, ManhattanDistanceNotRewritten) {
  // sum_r |x_r - y_r| has no exact dot form.
  ExpectUnchanged(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  a = f32[16,16,32]{2,1,0} abs(d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(a, zero), dimensions={2}, to_apply=sum
)"));
}

TEST(AlgebraicRewriter, SumOfProductsBecomesDot) {
  // sum_r a[i, r] * c[j, r] over broadcasts is a.c^T, without a clamp.
  const PassRun run = RunPass(kPass, Module(R"(
  a = f32[16,32]{1,0} parameter(0)
  c = f32[16,32]{1,0} parameter(1)
  ba = f32[16,16,32]{2,1,0} broadcast(a), dimensions={0,2}
  bc = f32[16,16,32]{2,1,0} broadcast(c), dimensions={1,2}
  p = f32[16,16,32]{2,1,0} multiply(ba, bc)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(p, zero), dimensions={2}, to_apply=sum
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,32]
    CHECK:     ROOT {{.*}} = f32[16,16]{1,0} dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
    CHECK-NOT: maximum(
  )"));
}

TEST(AlgebraicRewriter, SumOfProductsKeptSharedDimensionIsBatch) {
  // b is on both sides and survives the reduction: a batch dimension.
  const PassRun run = RunPass(kPass, Module(R"(
  a = f32[2,16,32]{2,1,0} parameter(0)
  c = f32[2,16,32]{2,1,0} parameter(1)
  ba = f32[2,16,16,32]{3,2,1,0} broadcast(a), dimensions={0,1,3}
  bc = f32[2,16,16,32]{3,2,1,0} broadcast(c), dimensions={0,2,3}
  p = f32[2,16,16,32]{3,2,1,0} multiply(ba, bc)
  zero = f32[] constant(0)
  ROOT r = f32[2,16,16]{2,1,0} reduce(p, zero), dimensions={3}, to_apply=sum
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: ROOT {{.*}} = f32[2,16,16]{2,1,0} dot(a, c), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  )"));
}

TEST(AlgebraicRewriter, SumOfProductsOneSidedDimensionSummedFirst) {
  // r is only on a's side: sum_r a[i, r] * c[j] = (sum_r a[i, r]) * c[j].
  const PassRun run = RunPass(kPass, Module(R"(
  a = f32[16,64]{1,0} parameter(0)
  c = f32[16]{0} parameter(1)
  ba = f32[16,16,64]{2,1,0} broadcast(a), dimensions={0,2}
  bc = f32[16,16,64]{2,1,0} broadcast(c), dimensions={1}
  p = f32[16,16,64]{2,1,0} multiply(ba, bc)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(p, zero), dimensions={2}, to_apply=sum
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f32[16,16,64]
    CHECK:     [[SA:[a-z0-9.]+]] = f32[16]{0} reduce(a, {{.*}}), dimensions={1}, to_apply=sum
    CHECK:     dot([[SA]], c)
  )"));
}

TEST(AlgebraicRewriter, ElementwiseProductWithoutBroadcastLeftAlone) {
  // Not a candidate at all (no big tensor to avoid), so not even a
  // "left alone" message.
  const std::string module = Module(R"(
  a = f32[16,32]{1,0} parameter(0)
  c = f32[16,32]{1,0} parameter(1)
  p = f32[16,32]{1,0} multiply(a, c)
  zero = f32[] constant(0)
  ROOT r = f32[16]{0} reduce(p, zero), dimensions={1}, to_apply=sum
)");
  ExpectUnchanged(kPass, module);
  EXPECT_TRUE(RunPass(kPass, module).messages.empty());
}

TEST(AlgebraicRewriter, NonZeroInitIsNotASum) {
  // reduce starting from 1 adds 1 to every element: not a plain sum.
  ExpectUnchanged(kPass, Module(R"(
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  one = f32[] constant(1)
  ROOT r = f32[16,16]{1,0} reduce(sq, one), dimensions={2}, to_apply=sum
)"));
}

TEST(AlgebraicRewriter, MaxReductionIsNotASum) {
  ExpectUnchanged(kPass, R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[16,32]{1,0} parameter(0)
  y = f32[16,32]{1,0} parameter(1)
  bx = f32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[16,16,32]{2,1,0} subtract(bx, by)
  sq = f32[16,16,32]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  ROOT r = f32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=max
}
)");
}

TEST(AlgebraicRewriter, IntegerDistanceLeftAlone) {
  // The rewrite is for floating point only.
  ExpectUnchanged(kPass, R"(HloModule m

sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  x = s32[16,32]{1,0} parameter(0)
  y = s32[16,32]{1,0} parameter(1)
  bx = s32[16,16,32]{2,1,0} broadcast(x), dimensions={0,2}
  by = s32[16,16,32]{2,1,0} broadcast(y), dimensions={1,2}
  d = s32[16,16,32]{2,1,0} subtract(bx, by)
  sq = s32[16,16,32]{2,1,0} multiply(d, d)
  zero = s32[] constant(0)
  ROOT r = s32[16,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
}
)");
}

}  // namespace
