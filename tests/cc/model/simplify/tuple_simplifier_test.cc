// XLA's tuple simplifier (cc/model/simplify/tuple_simplifier.h).
#include "model/simplify/tuple_simplifier.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::TupleSimplifier;
using exla_test::FileCheck;
using exla_test::RunSimplification;

TEST(TupleSimplifier, ReadOfATupleBuiltInPlaceIsItsElement) {
  TupleSimplifier pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  t = (f32[8]{0}, f32[8]{0}) tuple(x, y)
  g = f32[8]{0} get-tuple-element(t), index=1
  ROOT n = f32[8]{0} negate(g)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT n = f32[8]{0} negate(y)
    CHECK-NOT: tuple(
  )"));
}

TEST(TupleSimplifier, ReadOfAParameterStays) {
  TupleSimplifier pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  p = (f32[8]{0}, f32[8]{0}) parameter(0)
  g = f32[8]{0} get-tuple-element(p), index=1
  ROOT n = f32[8]{0} negate(g)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
