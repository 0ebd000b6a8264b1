// XLA's algebraic simplifier folding a reshape into the reduce that reads it
// (cc/model/simplify/reduce_of_reshape.h).
#include <string>

#include "model/simplify/reduce_of_reshape.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReduceOfReshape;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A sum over `dimensions` of x (of shape `from`) reshaped to `to`, with
// result shape `result`.
std::string SumOfAReshape(const std::string& from, const std::string& to, const std::string& dimensions,
                          const std::string& result) {
  return R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}

ENTRY e {
  x = )" + from + R"( parameter(0)
  y = )" + to + R"( reshape(x)
  zero = f32[] constant(0)
  ROOT s = )" + result + R"( reduce(y, zero), dimensions={)" + dimensions + R"(}, to_apply=add
}
)";
}

TEST(ReduceOfReshape, SumOfEveryElementReadsTheOperand) {
  ReduceOfReshape pass;
  const auto run = RunSimplification(
      pass, SumOfAReshape("f32[62,147]{0,1}", "f32[31,294]{1,0}", "0,1", "f32[]"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT s = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add
    CHECK-NOT: reshape
  )"));
}

TEST(ReduceOfReshape, SumOfSplitRowsSumsTheRows) {
  // Dimension 0 (8 rows) is kept and the reshape leaves it as it was.
  ReduceOfReshape pass;
  const auto run = RunSimplification(
      pass, SumOfAReshape("f32[8,12]{1,0}", "f32[8,3,4]{2,1,0}", "1,2", "f32[8]{0}"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT s = f32[8]{0} reduce(x, zero), dimensions={1}"));
}

TEST(ReduceOfReshape, KeptDimensionTheReshapeMergesIsLeft) {
  // The 8 rows kept are 2 x 4 of the operand: no reduce of x gives them.
  ReduceOfReshape pass;
  const auto run = RunSimplification(
      pass, SumOfAReshape("f32[2,4,12]{2,1,0}", "f32[8,12]{1,0}", "1", "f32[8]{0}"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(y, zero), dimensions={1}"));
}

}  // namespace
