// XLA's algebraic simplifier merging a reshape of a reshape and removing a
// reshape to its operand's shape (cc/model/simplify/reshape_of_reshape.h).
#include <string>

#include "model/simplify/reshape_of_reshape.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReshapeOfReshape;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// x reshaped to `mid`, then to `out`, added to itself.
std::string TwoReshapesOfX(const std::string& mid, const std::string& out) {
  return R"(HloModule m

ENTRY e {
  x = f32[6,4]{1,0} parameter(0)
  r1 = )" + mid + R"( reshape(x)
  r2 = )" + out + R"( reshape(r1)
  ROOT s = )" + out + " add(r2, r2)\n}\n";
}

TEST(ReshapeOfReshape, ReshapeBackToTheOperandsShapeIsTheOperand) {
  ReshapeOfReshape pass;
  const auto run = RunSimplification(pass, TwoReshapesOfX("f32[6,1,4]{2,1,0}", "f32[6,4]{1,0}"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT s = f32[6,4]{1,0} add(x, x)
    CHECK-NOT: reshape(
  )"));
}

TEST(ReshapeOfReshape, ReshapeOfAReshapeIsOneReshapeOfTheFirstOperand) {
  ReshapeOfReshape pass;
  const auto run = RunSimplification(pass, TwoReshapesOfX("f32[6,1,4]{2,1,0}", "f32[24]{0}"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     r2.merged = f32[24]{0} reshape(x)
    CHECK:     ROOT s = f32[24]{0} add(r2.merged, r2.merged)
    CHECK-NOT: r1
  )"));
}

TEST(ReshapeOfReshape, ResultThatWouldBeItsOperandIsLeft) {
  // XLA copies a parameter into the result; the model reads the reshape
  // at the root as that copy.
  ReshapeOfReshape pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[6,4]{1,0} parameter(0)
  ROOT r = f32[6,4]{1,0} reshape(x)
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT r = f32[6,4]{1,0} reshape(x)"));
}

TEST(ReshapeOfReshape, SingleReshapeThatChangesTheShapeIsLeft) {
  ReshapeOfReshape pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[6,4]{1,0} parameter(0)
  r = f32[24]{0} reshape(x)
  ROOT s = f32[24]{0} add(r, r)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
