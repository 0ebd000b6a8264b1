// XLA's call inliner (cc/model/simplify/call_inliner.h).
#include "model/simplify/call_inliner.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::CallInliner;
using exla_test::FileCheck;
using exla_test::RunSimplification;

TEST(CallInliner, CallsAndTheCallsTheyHoldAreInlined) {
  CallInliner pass;
  const auto run = RunSimplification(pass, R"(HloModule m

inner {
  a = f32[8]{0} parameter(0)
  ROOT n = f32[8]{0} negate(a)
}

outer {
  a = f32[8]{0} parameter(0)
  e = f32[8]{0} exponential(a)
  ROOT c = f32[8]{0} call(e), to_apply=inner
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} call(x), to_apply=outer
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      ENTRY main {
    CHECK-NEXT:   x = f32[8]{0} parameter(0)
    CHECK-NEXT:   [[E:[a-z0-9.]+]] = f32[8]{0} exponential(x)
    CHECK-NEXT:   ROOT {{.*}} = f32[8]{0} negate([[E]])
    CHECK-NEXT: }
  )"));
}

TEST(CallInliner, ModuleWithoutCallsIsLeftAlone) {
  CallInliner pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT e = f32[8]{0} exponential(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
