// XLA computing a regular literal instead of keeping it
// (cc/model/simplify/regular_literals.h).
#include <string>

#include "model/simplify/regular_literals.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::RegularLiterals;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// An add of a parameter and the literal `values` of `type`[4].
std::string AddOfLiteral(const std::string& type, const std::string& values) {
  return R"(HloModule m

ENTRY e {
  x = )" + type + R"([4]{0} parameter(0)
  c = )" + type + "[4]{0} constant({" + values + R"(})
  ROOT r = )" + type + "[4]{0} add(x, c)\n}\n";
}

TEST(RegularLiterals, IotaLiteralBecomesAnIota) {
  RegularLiterals pass;
  const auto run = RunSimplification(pass, AddOfLiteral("f32", "0, 1, 2, 3"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     c.iota = f32[4]{0} iota(), iota_dimension=0
    CHECK:     ROOT r = f32[4]{0} add(x, c.iota)
    CHECK-NOT: constant(
  )"));
}

TEST(RegularLiterals, StridedIntegerLiteralBecomesAnIotaTimesItsStride) {
  RegularLiterals pass;
  const auto run = RunSimplification(pass, AddOfLiteral("s32", "0, 3, 6, 9"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     c.iota = s32[4]{0} iota(), iota_dimension=0
    CHECK:     c.stride = s32[] constant(3)
    CHECK:     c.strides = s32[4]{0} broadcast(c.stride), dimensions={}
    CHECK:     c.strided = s32[4]{0} multiply(c.iota, c.strides)
    CHECK:     ROOT r = s32[4]{0} add(x, c.strided)
  )"));
}

TEST(RegularLiterals, StridedFloatingPointLiteralIsKept) {
  // XLA recognises strides in integer literals only.
  RegularLiterals pass;
  const auto run = RunSimplification(pass, AddOfLiteral("f32", "0, 3, 6, 9"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: c = f32[4]{0} constant({0, 3, 6, 9})"));
}

TEST(RegularLiterals, LiteralOfEqualElementsBecomesABroadcastOfOne) {
  RegularLiterals pass;
  const auto run = RunSimplification(pass, AddOfLiteral("f32", "7, 7, 7, 7"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     c.scalar = f32[] constant(7)
    CHECK:     c.broadcast = f32[4]{0} broadcast(c.scalar), dimensions={}
    CHECK:     ROOT r = f32[4]{0} add(x, c.broadcast)
  )"));
}

TEST(RegularLiterals, OtherLiteralsAreKept) {
  RegularLiterals pass;
  for (const char* values : {"1, 2, 3, 4", "0, 1, 2, 4", "0, 0, 0, 1"}) {
    const auto run = RunSimplification(pass, AddOfLiteral("s32", values));
    EXPECT_FALSE(run.changed) << values;
  }
}

}  // namespace
