// XLA's algebraic simplifier turning a broadcast and a reduce that move no
// element into reshapes (cc/model/simplify/reshape_equivalents.h).
#include <string>

#include "model/simplify/reshape_equivalents.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReshapeEquivalents;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// x, broadcast to `shape` along `dimensions`, added to itself.
std::string BroadcastOfX(const std::string& x, const std::string& shape, const std::string& dimensions) {
  return R"(HloModule m

ENTRY e {
  x = )" + x + R"( parameter(0)
  b = )" + shape + " broadcast(x), dimensions={" + dimensions + R"(}
  ROOT s = )" + shape + " add(b, b)\n}\n";
}

TEST(ReshapeEquivalents, BroadcastThatInsertsADimensionOfOneIsAReshape) {
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, BroadcastOfX("f32[280,3]{1,0}", "f32[280,1,3]{2,1,0}", "0,2"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     b.reshape = f32[280,1,3]{2,1,0} reshape(x)
    CHECK:     ROOT s = f32[280,1,3]{2,1,0} add(b.reshape, b.reshape)
    CHECK-NOT: broadcast(
  )"));
}

TEST(ReshapeEquivalents, BroadcastToItsOperandsShapeIsItsOperand) {
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, BroadcastOfX("f32[1,280,3]{2,1,0}", "f32[1,280,3]{2,1,0}", "0,1,2"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT s = f32[1,280,3]{2,1,0} add(x, x)
    CHECK-NOT: broadcast(
    CHECK-NOT: reshape(
  )"));
}

TEST(ReshapeEquivalents, BroadcastThatAddsElementsIsLeft) {
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, BroadcastOfX("f32[280,3]{1,0}", "f32[280,2,3]{2,1,0}", "0,2"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: b = f32[280,2,3]{2,1,0} broadcast(x), dimensions={0,2}"));
}

TEST(ReshapeEquivalents, BroadcastThatPermutesDimensionsIsLeft) {
  // Its operand's dimensions out of order: a transpose, which moves data.
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, BroadcastOfX("f32[280,3]{1,0}", "f32[3,280]{1,0}", "1,0"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: b = f32[3,280]{1,0} broadcast(x), dimensions={1,0}"));
}

// x, summed over `dimensions` into `shape`.
std::string SumOfX(const std::string& x, const std::string& shape, const std::string& dimensions) {
  return R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = )" + x + R"( parameter(0)
  z = f32[] constant(0)
  ROOT r = )" + shape + " reduce(x, z), dimensions={" + dimensions + "}, to_apply=add\n}\n";
}

TEST(ReshapeEquivalents, ReduceOverADimensionOfOneIsAReshape) {
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, SumOfX("f32[193,1,16]{2,1,0}", "f32[193,16]{1,0}", "1"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT r.reshape = f32[193,16]{1,0} reshape(x)
    CHECK-NOT: reduce(
  )"));
}

TEST(ReshapeEquivalents, ReduceThatSumsElementsIsLeft) {
  ReshapeEquivalents pass;
  const auto run = RunSimplification(pass, SumOfX("f32[193,2,16]{2,1,0}", "f32[193,16]{1,0}", "1"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT r = f32[193,16]{1,0} reduce(x, z), dimensions={1}"));
}

}  // namespace
