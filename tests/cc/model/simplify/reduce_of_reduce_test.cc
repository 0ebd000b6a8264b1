// XLA's algebraic simplifier folding a reduction of a reduction
// (cc/model/simplify/reduce_of_reduce.h).
#include <string>

#include "model/simplify/reduce_of_reduce.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReduceOfReduce;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// Row sums of x, then the sum of those over dimension 0, adding with
// `outer_combiner` from `outer_init`. With `other_reader`, the row sums are
// also negated and returned beside the sum (the row sums of distances a
// program divides by their mean, say).
std::string RowSumsThenSum(const std::string& outer_combiner, const std::string& outer_init,
                           bool other_reader = false) {
  const std::string root =
      other_reader ? "  other = f32[16,4]{1,0} negate(rows)\n"
                     "  ROOT out = (f32[4]{0}, f32[16,4]{1,0}) tuple(total, other)\n"
                   : "";
  return R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add2 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

ENTRY e {
  x = f32[16,8,4]{2,1,0} parameter(0)
  zero = f32[] constant(0)
  init = f32[] constant()" + outer_init + R"()
  rows = f32[16,4]{1,0} reduce(x, zero), dimensions={1}, to_apply=add
  same = f32[16,4]{1,0} convert(rows)
  )" + (other_reader ? "" : "ROOT ") + "total = f32[4]{0} reduce(same, init), dimensions={0}, to_apply=" +
         outer_combiner + "\n" + root + "}\n";
}

TEST(ReduceOfReduce, EqualCombinersFoldIntoOneReduce) {
  // The outer dimension 0 of the row sums is dimension 0 of x; with the
  // inner dimension 1, x is reduced over {0,1}. The row sums and their
  // conversion to their own type go.
  ReduceOfReduce pass;
  const auto run = RunSimplification(pass, RowSumsThenSum("add2", "0"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT total = f32[4]{0} reduce(x, init), dimensions={0,1}, to_apply=add2
    CHECK-NOT: rows =
  )"));
}

TEST(ReduceOfReduce, OuterDimensionsAreCountedInTheInnerInput) {
  // Reducing dimension 1 of the row sums f32[16,4] is dimension 2 of x.
  ReduceOfReduce pass;
  std::string text = RowSumsThenSum("add", "0");
  text.replace(text.find("ROOT total = f32[4]{0}"), 22, "ROOT total = f32[16]{0}");
  text.replace(text.find("dimensions={0}, to_apply=add\n"), 14, "dimensions={1}");
  const auto run = RunSimplification(pass, text);
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT total = f32[16]{0} reduce(x, init), dimensions={1,2}"));
}

TEST(ReduceOfReduce, FoldsWhateverElseReadsTheInnerReduce) {
  // XLA does not look at the inner reduce's other readers: it keeps
  // computing the row sums for them.
  ReduceOfReduce pass;
  const auto run = RunSimplification(
      pass, RowSumsThenSum("add", "0", /*other_reader=*/true));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: rows = f32[16,4]{1,0} reduce(x, zero), dimensions={1}
    CHECK: total = f32[4]{0} reduce(x, init), dimensions={0,1}
  )"));
}

TEST(ReduceOfReduce, OtherCombinerIsLeft) {
  ReduceOfReduce pass;
  const auto run = RunSimplification(pass, RowSumsThenSum("max", "0"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(same, init), dimensions={0}"));
}

TEST(ReduceOfReduce, OtherInitialValueIsLeft) {
  ReduceOfReduce pass;
  const auto run = RunSimplification(pass, RowSumsThenSum("add", "1"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(same, init), dimensions={0}"));
}

}  // namespace
