// XLA's while loop simplifier on loops of one trip
// (cc/model/simplify/single_trip_loops.h).
#include <string>

#include "model/simplify/single_trip_loops.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::SingleTripLoopToCall;
using exla_test::FileCheck;
using exla_test::RunSimplification;

std::string Loop(int trips) {
  return R"(HloModule m

body {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[8]{0} exponential(x)
  ROOT t = (s32[], f32[8]{0}) tuple(i1, e)
}

cond {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant()" + std::to_string(trips) + R"()
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[8]{0}) tuple(zero, x)
  w = (s32[], f32[8]{0}) while(t), condition=cond, body=body
  ROOT r = f32[8]{0} get-tuple-element(w), index=1
}
)";
}

TEST(SingleTripLoopToCall, LoopOfOneTripBecomesACallOfItsBody) {
  SingleTripLoopToCall pass;
  const auto run = RunSimplification(pass, Loop(1));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     w.once = (s32[], f32[8]{0}) call(t), to_apply=body
    CHECK:     ROOT r = f32[8]{0} get-tuple-element(w.once), index=1
    CHECK-NOT: while(
  )"));
}

TEST(SingleTripLoopToCall, LoopOfTwoTripsStays) {
  SingleTripLoopToCall pass;
  const auto run = RunSimplification(pass, Loop(2));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: while(t), condition=cond, body=body"));
}

}  // namespace
