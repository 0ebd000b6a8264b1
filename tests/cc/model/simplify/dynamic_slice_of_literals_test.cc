// XLA's algebraic simplifier on a dynamic slice at literal offsets
// (cc/model/simplify/dynamic_slice_of_literals.h).
#include "model/simplify/dynamic_slice_of_literals.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::DynamicSliceOfLiterals;
using exla_test::FileCheck;
using exla_test::RunSimplification;

TEST(DynamicSliceOfLiterals, LiteralOffsetsMakeAStaticSlice) {
  DynamicSliceOfLiterals pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[64,2]{1,0} parameter(0)
  zero = s32[] constant(0)
  s = f32[8,2]{1,0} dynamic-slice(x, zero, zero), dynamic_slice_sizes={8,2}
  ROOT n = f32[8,2]{1,0} negate(s)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: dynamic-slice(
    CHECK:     [[S:[^ ]+]] = f32[8,2]{1,0} slice(x), slice={[0:8], [0:2]}
    CHECK:     negate([[S]])
  )"));
}

TEST(DynamicSliceOfLiterals, OffsetComputedAtRunTimeStays) {
  DynamicSliceOfLiterals pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[64,2]{1,0} parameter(0)
  i = s32[] parameter(1)
  zero = s32[] constant(0)
  ROOT s = f32[8,2]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={8,2}
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
