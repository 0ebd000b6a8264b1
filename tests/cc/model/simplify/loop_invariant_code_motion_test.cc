// XLA's while loop invariant code motion
// (cc/model/simplify/loop_invariant_code_motion.h).
#include <string>

#include "model/simplify/loop_invariant_code_motion.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::LoopInvariantCodeMotion;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A loop of `trips` trips whose body computes @ from the scalar x and the
// matrix w, which it returns unchanged, and adds it to its sum.
std::string Loop(const std::string& work, int trips) {
  std::string text = R"(HloModule m

body {
  s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  acc = f32[64,2]{1,0} get-tuple-element(s), index=2
  w = f32[2,64]{1,0} get-tuple-element(s), index=3
  b = f32[64,64]{1,0} broadcast(x), dimensions={}
  @
  sum = f32[64,2]{1,0} add(acc, d)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) tuple(n, x, sum, w)
}

cond {
  s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = s32[] constant($)
  ROOT lt = pred[] compare(i, c), direction=LT
}

ENTRY main {
  x = f32[] parameter(0)
  w = f32[2,64]{1,0} parameter(1)
  a = f32[64,2]{1,0} parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) tuple(zero, x, a, w)
  loop = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[64,2]{1,0} get-tuple-element(loop), index=2
}
)";
  text.replace(text.find('@'), 1, work);
  text.replace(text.find('$'), 1, std::to_string(trips));
  return text;
}

const char kDot[] = "d = f32[64,2]{1,0} dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}";

TEST(LoopInvariantCodeMotion, InvariantDotIsHoistedWithTheBroadcastItReads) {
  LoopInvariantCodeMotion pass;
  const auto run = RunSimplification(pass, Loop(kDot, 6));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     body
    CHECK:     s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}, f32[64,2]{1,0}) parameter(0)
    CHECK-NOT: dot(
    CHECK:     [[READ:[^ ]+]] = f32[64,2]{1,0} get-tuple-element(s), index=4
    CHECK:     cond
    CHECK:     ENTRY
    CHECK:     [[B:[^ ]+]] = f32[64,64]{1,0} broadcast(x)
    CHECK:     [[D:[^ ]+]] = f32[64,2]{1,0} dot([[B]], w)
    CHECK:     tuple(zero, x, a, w, [[D]])
  )"));
}

TEST(LoopInvariantCodeMotion, BroadcastAloneStaysInTheBody) {
  // XLA's NotWorthHoistingIndividually: a broadcast moves only with a reader.
  LoopInvariantCodeMotion pass;
  const auto run = RunSimplification(
      pass, Loop("d = f32[64,2]{1,0} slice(b), slice={[0:64], [0:2]}", 6));
  EXPECT_FALSE(run.changed);
}

TEST(LoopInvariantCodeMotion, LoopOfOneTripIsLeftAlone) {
  LoopInvariantCodeMotion pass;
  const auto run = RunSimplification(pass, Loop(kDot, 1));
  EXPECT_FALSE(run.changed);
}

TEST(LoopInvariantCodeMotion, ElementwiseOfScalarBroadcastsIsHoistedAsAScalar) {
  // XLA's simplifier has made multiply(broadcast(x), broadcast(c)) the
  // broadcast of a scalar product before the loop is looked at: the loop
  // carries the scalar (measured: f32[] multiply(x, 0.7) before the loop),
  // not a 16 KiB array.
  LoopInvariantCodeMotion pass;
  const auto run = RunSimplification(pass, Loop(R"(c = f32[] constant(0.7)
  bc = f32[64,64]{1,0} broadcast(c), dimensions={}
  m = f32[64,64]{1,0} multiply(b, bc)
  d = f32[64,2]{1,0} dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={1})", 6));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     body
    CHECK:     s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}, f32[], /*index=5*/f32[64,2]{1,0}) parameter(0)
    CHECK:     ENTRY
    CHECK:     [[M:[^ ]+]] = f32[] multiply(x, {{[^ ]+}})
    CHECK:     [[B:[^ ]+]] = f32[64,64]{1,0} broadcast([[M]])
    CHECK:     [[D:[^ ]+]] = f32[64,2]{1,0} dot([[B]], w)
    CHECK:     tuple(zero, x, a, w, [[M]], [[D]])
  )"));
}

}  // namespace
