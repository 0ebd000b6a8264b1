// A loop body's running accumulator split along a dimension its update keeps
// (SplitRegion::written_in_place): the nested loop reads each slice of the
// state and writes the same slice of its next value into the state's own
// buffer, instead of refusing at the body's result tuple.
#include <cstdint>
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::PassRun;
using exla_test::RunPass;

// The tensor-splitter with in-place loop state on, at these sizes.
exla::Options InPlace(int64_t threshold, int64_t split_size) {
  exla::Options options = exla_test::SizeOptions(threshold, split_size);
  options.in_place_loop_state = true;
  return options;
}

constexpr char kPass[] = "tensor-splitter";

// A program's loop whose 8 KB state `acc` is rescaled and added to, row by
// row: acc' = acc * 0.5 + exp(x). `extra` goes into the body: "old" reads
// the state outside the update as well.
std::string RunningSum(const std::string& extra_root, const std::string& extra) {
  return R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  state = (s32[], f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  acc = f32[64,32]{1,0} get-tuple-element(state), index=1
  x = f32[64,32]{1,0} get-tuple-element(state), index=2
  e = f32[64,32]{1,0} exponential(x)
  half = f32[] constant(0.5)
  halves = f32[64,32]{1,0} broadcast(half), dimensions={}
  scaled = f32[64,32]{1,0} multiply(acc, halves)
  next = f32[64,32]{1,0} add(scaled, e)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
)" + extra + R"(
  ROOT result = (s32[], f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64]{0}) tuple(i1, next, x, )" +
         extra_root + R"()
}

cond {
  state = (s32[], f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  three = s32[] constant(3)
  ROOT more = pred[] compare(i, three), direction=LT
}

ENTRY main {
  acc0 = f32[64,32]{1,0} parameter(0)
  x = f32[64,32]{1,0} parameter(1)
  r0 = f32[64]{0} parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64]{0}) tuple(zero, acc0, x, r0)
  loop = (s32[], f32[64,32]{1,0}, f32[64,32]{1,0}, f32[64]{0}) while(init), condition=cond, body=body
  ROOT out = f32[64,32]{1,0} get-tuple-element(loop), index=1
}
)";
}

// The body keeps its fourth state element unchanged.
const std::string kRunningSum = RunningSum("r", "  r = f32[64]{0} get-tuple-element(state), index=3");

TEST(LoopStateInPlace, RunningAccumulatorIsSplitAndWrittenIntoItsOwnBuffer) {
  // The state (8 KB) is over the 4 KB threshold. The nested loop starts from
  // the state's own value, not a new buffer, and slices it from there; the
  // state's place among the loop's inputs holds a scalar.
  const PassRun run = RunPass(kPass, kRunningSum, InPlace(4096, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      split_body {
    CHECK:      [[STATE:[a-z0-9.-]+]] = {{.*}} parameter(0)
    CHECK:      [[BUFFER:[a-z0-9.-]+]] = f32[64,32]{1,0} get-tuple-element([[STATE]]), index=1
    CHECK:      f32[8,32]{1,0} dynamic-slice([[BUFFER]],
    CHECK:      [[WRITTEN:[a-z0-9.-]+]] = f32[64,32]{1,0} get-tuple-element([[STATE]]), index=1
    CHECK:      f32[64,32]{1,0} dynamic-update-slice([[WRITTEN]],
    CHECK:      body {
    CHECK:      [[OUTER:[a-z0-9.-]+]] = {{.*}} parameter(0)
    CHECK:      [[ACC:[a-z0-9.-]+]] = f32[64,32]{1,0} get-tuple-element([[OUTER]]), index=1
    CHECK:      [[PLACEHOLDER:[a-z0-9.-]+]] = f32[] constant(0)
    CHECK-NEXT: [[INIT:[a-z0-9.-]+]] = {{.*}} tuple({{[a-z0-9.-]+}}, [[ACC]], x, [[PLACEHOLDER]])
    CHECK-NEXT: while([[INIT]])
  )")) << run.text;
  EXPECT_FALSE(HasMessage(run, "left body/")) << "nothing in the body should be left unsplit";
}

TEST(LoopStateInPlace, StateReadElsewhereIsNotOverwritten) {
  // The body also reads the old state whole (its row sums go to the fourth
  // element): the update cannot overwrite its buffer, and a second buffer
  // as large as the state would exceed the threshold.
  const PassRun run = RunPass(
      kPass, RunningSum("rows", "  zero = f32[] constant(0)\n"
                                "  rows = f32[64]{0} reduce(acc, zero), dimensions={1}, to_apply=sum"),
      InPlace(4096, 1024));
  EXPECT_TRUE(HasMessage(run, "would stay too large")) << run.text;
  EXPECT_EQ(run.text.find("dynamic-update-slice"), std::string::npos) << run.text;
}

TEST(LoopStateInPlace, OffByDefault) {
  // Without the option the body's result tuple refuses slices, as before.
  const PassRun run = RunPass(kPass, kRunningSum, exla_test::SizeOptions(4096, 1024));
  EXPECT_TRUE(HasMessage(run, "left body/next")) << run.text;
  EXPECT_EQ(run.text.find("dynamic-update-slice"), std::string::npos) << run.text;
}

}  // namespace
