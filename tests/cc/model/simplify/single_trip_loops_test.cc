// XLA's while loop simplifier on loops of one trip
// (cc/model/simplify/single_trip_loops.h).
#include "model/simplify/single_trip_loops.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::SingleTripLoopToCall;
using exla_test::FileCheck;
using exla_test::CountedLoop;
using exla_test::RunSimplification;

TEST(SingleTripLoopToCall, LoopOfOneTripBecomesACallOfItsBody) {
  SingleTripLoopToCall pass;
  const auto run = RunSimplification(pass, CountedLoop(1));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     w.once = (s32[], f32[8]{0}) call(t), to_apply=body
    CHECK:     ROOT r = f32[8]{0} get-tuple-element(w.once), index=1
    CHECK-NOT: while(
  )"));
}

TEST(SingleTripLoopToCall, LoopOfTwoTripsStays) {
  SingleTripLoopToCall pass;
  const auto run = RunSimplification(pass, CountedLoop(2));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: while(t), condition=cond, body=body"));
}

}  // namespace
