// Literals a loop only carries, read as literals in its body
// (model/simplify/loop_constant_sinking.h).
#include <string>

#include "model/simplify/loop_constant_sinking.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::LoopConstantSinking;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A loop carries the zeros the two reductions of its body start from
// (elements 2 and 3, returned unchanged, as TensorFlow's loops carry their
// reductions' initial values) and sums, on each trip, the squares of x as
// row sums and then the sum of those.
const std::string kCarriedZero = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  p = (s32[], f32[], f32[], f32[], f32[127,3]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[] get-tuple-element(p), index=1
  zero = f32[] get-tuple-element(p), index=2
  zero2 = f32[] get-tuple-element(p), index=3
  x = f32[127,3]{1,0} get-tuple-element(p), index=4
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  sq = f32[127,3]{1,0} multiply(x, x)
  rows = f32[127]{0} reduce(sq, zero), dimensions={1}, to_apply=add
  total = f32[] reduce(rows, zero2), dimensions={0}, to_apply=add
  acc1 = f32[] add(acc, total)
  ROOT t = (s32[], f32[], f32[], f32[], f32[127,3]{1,0}) tuple(i1, acc1, zero, zero2, x)
}

cond {
  p = (s32[], f32[], f32[], f32[], f32[127,3]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[127,3]{1,0} parameter(0)
  z = f32[] constant(0)
  zero = s32[] constant(0)
  t = (s32[], f32[], f32[], f32[], f32[127,3]{1,0}) tuple(zero, z, z, z, x)
  w = (s32[], f32[], f32[], f32[], f32[127,3]{1,0}) while(t), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}
)";

TEST(LoopConstantSinking, ReadsOfACarriedLiteralReadTheLiteral) {
  LoopConstantSinking pass;
  const auto run = RunSimplification(pass, kCarriedZero);
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      body
    CHECK:      [[Z:z[.0-9]*]] = f32[] constant(0)
    CHECK-NEXT: rows = f32[127]{0} reduce(sq, [[Z]])
    CHECK-NEXT: [[Z2:z[.0-9]*]] = f32[] constant(0)
    CHECK-NEXT: total = f32[] reduce(rows, [[Z2]])
    CHECK:      ROOT t = {{.*}} tuple(i1, acc1, zero, zero2, x)
  )"));
}

TEST(LoopConstantSinking, AnElementTheBodyChangesIsLeftAsARead) {
  // The body returns the sum in element 2: that zero is the first trip's
  // only. Element 3 still rides through unchanged.
  std::string text = kCarriedZero;
  text.replace(text.find("tuple(i1, acc1, zero, zero2, x)"), 31, "tuple(i1, acc1, acc1, zero2, x)");
  LoopConstantSinking pass;
  const auto run = RunSimplification(pass, text);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     rows = f32[127]{0} reduce(sq, zero)
    CHECK-NOT: total = f32[] reduce(rows, zero2)
  )"));
}

TEST(LoopConstantSinking, AnElementStartingFromAParameterIsLeft) {
  std::string text = kCarriedZero;
  text.replace(text.find("tuple(zero, z, z, z, x)"), 23, "tuple(zero, z, y, y, x)");
  text.replace(text.find("  z = f32[] constant(0)\n"), 0, "  y = f32[] parameter(1)\n");
  LoopConstantSinking pass;
  EXPECT_FALSE(RunSimplification(pass, text).changed);
}

TEST(LoopConstantSinking, TheModelStoresTheSquaresTheMergedSumReads) {
  // With the zeros literals, XLA folds the sum of row sums (the two
  // reductions starting from different elements of the state) into one sum
  // of all 127 x 3 squares, long enough for its tree reduction, which stores
  // the squares (1,524 B) instead of the row sums (508 B). XLA's buffer
  // assignment (jaxlib 0.7.1): 3,232 B with constants, the squares and x
  // alive together at its peak.
  const exla::MemoryPrediction p = exla::PredictMemory(kCarriedZero);
  EXPECT_GE(p.temp_bytes, 1524);
  EXPECT_GE(p.peak_bytes(), 3232 * 9 / 10);
  EXPECT_LE(p.peak_bytes(), 3232 * 11 / 10);
}

}  // namespace
