// XLA's algebraic simplifier folding a pad into the reduce-window that
// reads it (cc/model/simplify/pad_into_reduce_window.h).
#include <string>

#include "model/simplify/pad_into_reduce_window.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::PadIntoReduceWindow;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A sum over 2x2 windows (`window`) of `a` padded with `value` by `padding`.
std::string SumOfPad(const std::string& value, const std::string& padding, const std::string& padded,
                     const std::string& window, const std::string& result) {
  return R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  a = f32[64,64]{1,0} exponential(x)
  zero = f32[] constant(0)
  v = f32[] constant()" + value + R"()
  p = )" + padded + R"({1,0} pad(a, v), padding=)" + padding + R"(
  ROOT r = )" + result + R"({1,0} reduce-window(p, zero), window=)" + window + R"(, to_apply=add
}
)";
}

TEST(PadIntoReduceWindow, EdgesBecomeWindowPaddingAndInteriorABaseDilation) {
  PadIntoReduceWindow pass;
  const auto run = RunSimplification(pass, SumOfPad("0", "1_1_1x1_1_1", "f32[129,129]", "{size=2x2}", "f32[128,128]"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT r = f32[128,128]{1,0} reduce-window(a, zero), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}
    CHECK-NOT: pad(
  )"));
}

TEST(PadIntoReduceWindow, EdgesAddToTheWindowsOwnPaddingTimesItsDilation) {
  PadIntoReduceWindow pass;
  const auto run = RunSimplification(
      pass, SumOfPad("0", "2_0x0_1", "f32[66,65]", "{size=2x2 stride=2x1 pad=0_2x1_0 lhs_dilate=2x1}",
                     "f32[66,65]"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce-window(a, zero), window={size=2x2 stride=2x1 pad=4_2x1_1 lhs_dilate=2x1}"));
}

TEST(PadIntoReduceWindow, PadOfAnotherValueIsLeft) {
  // Windows over the edge would sum the 1s the pad writes.
  PadIntoReduceWindow pass;
  const auto run = RunSimplification(pass, SumOfPad("1", "1_1_1x1_1_1", "f32[129,129]", "{size=2x2}", "f32[128,128]"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce-window(p, zero)"));
}

TEST(PadIntoReduceWindow, InteriorPadOfABaseDilatedWindowIsLeft) {
  // The backends cannot dilate the base twice.
  PadIntoReduceWindow pass;
  const auto run = RunSimplification(
      pass, SumOfPad("0", "0_0_1x0_0_0", "f32[127,64]", "{size=2x1 lhs_dilate=2x1}", "f32[252,64]"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce-window(p, zero)"));
}

}  // namespace
