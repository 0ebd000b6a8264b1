// XLA's algebraic simplifier turning a division by a literal into a product
// (cc/model/simplify/divide_by_constant.h).
#include <string>

#include "model/simplify/divide_by_constant.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::DivideByConstant;
using exla_test::FileCheck;
using exla_test::RunSimplification;

std::string Division(const std::string& type, const std::string& divisor) {
  return R"(HloModule m

ENTRY e {
  x = )" + type + R"([260]{0} parameter(0)
  y = )" + type + R"([260]{0} parameter(1)
  c = )" + type + R"([] constant(94)
  b = )" + type + R"([260]{0} broadcast(c), dimensions={}
  ROOT d = )" + type + "[260]{0} divide(x, " + divisor + ")\n}\n";
}

TEST(DivideByConstant, DivisionByABroadcastLiteralBecomesAProduct) {
  DivideByConstant pass;
  const auto run = RunSimplification(pass, Division("f32", "b"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT d.reciprocal = f32[260]{0} multiply(x, b)
    CHECK-NOT: divide(
  )"));
}

TEST(DivideByConstant, DivisionByAValueIsLeft) {
  DivideByConstant pass;
  const auto run = RunSimplification(pass, Division("f32", "y"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT d = f32[260]{0} divide(x, y)"));
}

TEST(DivideByConstant, IntegerDivisionIsLeft) {
  // An integer has no reciprocal: XLA keeps the division.
  DivideByConstant pass;
  const auto run = RunSimplification(pass, Division("s32", "b"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: divide(x, b)"));
}

}  // namespace
