// XLA's algebraic simplifier splitting a reduce of a concatenate
// (cc/model/simplify/reduce_of_concatenate.h).
#include <string>

#include "model/simplify/reduce_of_concatenate.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReduceOfConcatenate;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A reduce over `dimensions` of a concatenate of a and b along dimension 1,
// with a reducer whose root is `root`.
std::string ReduceOfConcat(const std::string& dimensions, const std::string& root) {
  return R"(HloModule m

combine {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] )" + root + R"(
}

ENTRY e {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[8,24]{1,0} parameter(1)
  c = f32[8,40]{1,0} concatenate(a, b), dimensions={1}
  init = f32[] constant(0)
  ROOT s = f32[)" + (dimensions == "1" ? std::string("8]{0}") : std::string("40]{0}")) +
         " reduce(c, init), dimensions={" + dimensions + "}, to_apply=combine\n}\n";
}

TEST(ReduceOfConcatenate, ReduceOverTheJoinedDimensionReducesEachPart) {
  ReduceOfConcatenate pass;
  const auto run = RunSimplification(pass, ReduceOfConcat("1", "maximum(p, q)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-DAG: s.part0 = f32[8]{0} reduce(a, init), dimensions={1}, to_apply=combine
    CHECK-DAG: s.part1 = f32[8]{0} reduce(b, init), dimensions={1}, to_apply=combine
    CHECK:     ROOT s.join1 = f32[8]{0} maximum(s.part0, s.part1)
    CHECK-NOT: concatenate(
  )"));
}

TEST(ReduceOfConcatenate, ReduceOverAnotherDimensionIsLeft) {
  ReduceOfConcatenate pass;
  const auto run = RunSimplification(pass, ReduceOfConcat("0", "add(p, q)"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(c, init), dimensions={0}"));
}

TEST(ReduceOfConcatenate, ReducerThatIsNotOneBinaryOperationIsLeft) {
  // The parts could not be joined by one elementwise operation.
  ReduceOfConcatenate pass;
  const auto run = RunSimplification(pass, ReduceOfConcat("1", "subtract(p, q)"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(c, init), dimensions={1}"));
}

TEST(ReduceOfConcatenate, ConversionToItsOwnTypeIsLookedThrough) {
  // A framework's cast to the type the concatenation already has: XLA's
  // simplifier removes it first, then splits the reduce.
  std::string text = ReduceOfConcat("1", "add(p, q)");
  const std::string reduce = "reduce(c, init)";
  text.replace(text.find(reduce), reduce.size(), "reduce(cc, init)");
  const std::string concat = "c = f32[8,40]{1,0} concatenate(a, b), dimensions={1}";
  text.replace(text.find(concat), concat.size(), concat + "\n  cc = f32[8,40]{1,0} convert(c)");
  ReduceOfConcatenate pass;
  const auto run = RunSimplification(pass, text);
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-DAG: s.part0 = f32[8]{0} reduce(a, init), dimensions={1}, to_apply=combine
    CHECK-DAG: s.part1 = f32[8]{0} reduce(b, init), dimensions={1}, to_apply=combine
    CHECK:     ROOT s.join1 = f32[8]{0} add(s.part0, s.part1)
  )"));
}

}  // namespace
