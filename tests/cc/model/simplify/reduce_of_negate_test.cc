// XLA's algebraic simplifier taking a negation out of a sum
// (cc/model/simplify/reduce_of_negate.h).
#include <string>

#include "model/simplify/reduce_of_negate.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReduceOfNegate;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A reduce of -x from `init` with a reducer whose root is `root`.
std::string ReduceOfNegation(const std::string& init, const std::string& root) {
  return R"(HloModule m

combine {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] )" + root + R"(
}

ENTRY e {
  x = f32[8,16]{1,0} parameter(0)
  n = f32[8,16]{1,0} negate(x)
  init = f32[] constant()" + init + R"()
  ROOT s = f32[8]{0} reduce(n, init), dimensions={1}, to_apply=combine
}
)";
}

TEST(ReduceOfNegate, SumOfANegationIsTheNegationOfTheSum) {
  ReduceOfNegate pass;
  const auto run = RunSimplification(pass, ReduceOfNegation("0", "add(p, q)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     s.of_negated = f32[8]{0} reduce(x, init), dimensions={1}, to_apply=combine
    CHECK:     ROOT s.negated = f32[8]{0} negate(s.of_negated)
    CHECK-NOT: negate(x)
  )"));
}

TEST(ReduceOfNegate, MaximumOfANegationIsLeft) {
  ReduceOfNegate pass;
  const auto run = RunSimplification(pass, ReduceOfNegation("0", "maximum(p, q)"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(n, init)"));
}

TEST(ReduceOfNegate, SumFromAnotherStartIsLeft) {
  // -(1 + sum x) is not 1 + sum -x.
  ReduceOfNegate pass;
  const auto run = RunSimplification(pass, ReduceOfNegation("1", "add(p, q)"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(n, init)"));
}

}  // namespace
