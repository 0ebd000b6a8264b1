// XLA's common subexpression elimination
// (cc/model/simplify/common_subexpressions.h).
#include "model/simplify/common_subexpressions.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::CommonSubexpressionElimination;
using exla_test::FileCheck;
using exla_test::RunSimplification;

TEST(CommonSubexpressionElimination, EqualInstructionsMergeIntoTheFirst) {
  CommonSubexpressionElimination pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  a = f32[8]{0} exponential(x)
  b = f32[8]{0} exponential(x)
  ROOT r = f32[8]{0} add(a, b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT r = f32[8]{0} add(a, a)
    CHECK-NOT: b =
  )"));
}

TEST(CommonSubexpressionElimination, AddingZeroIsTheOperand) {
  // XLA's algebraic simplifier, which runs before CSE, removes x + 0, so
  // that (x + 0) * 2 and x * 2 merge.
  CommonSubexpressionElimination pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  zb = f32[8]{0} broadcast(z), dimensions={}
  two = f32[] constant(2)
  tb = f32[8]{0} broadcast(two), dimensions={}
  a = f32[8]{0} add(x, zb)
  m1 = f32[8]{0} multiply(a, tb)
  m2 = f32[8]{0} multiply(x, tb)
  ROOT r = f32[8]{0} subtract(m1, m2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT r = f32[8]{0} subtract(m1, m1)"));
}

TEST(CommonSubexpressionElimination, DifferentOperandsDoNotMerge) {
  CommonSubexpressionElimination pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  a = f32[8]{0} exponential(x)
  b = f32[8]{0} exponential(y)
  ROOT r = f32[8]{0} add(a, b)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
