// XLA's sort simplifier (cc/model/simplify/sort_simplifier.h).
#include <string>

#include "model/simplify/sort_simplifier.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::SortSimplifier;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A sort of values with an iota of their indices, of which the program
// reads element `read`; the comparator compares the values (parameters 0, 1).
std::string SortWithIndices(int read) {
  return R"(HloModule m

greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = f32[64]{0} parameter(0)
  idx = s32[64]{0} iota(), iota_dimension=0
  s = (f32[64]{0}, s32[64]{0}) sort(x, idx), dimensions={0}, to_apply=greater
  ROOT r = )" + std::string(read == 0 ? "f32" : "s32") + R"([64]{0} get-tuple-element(s), index=)" +
         std::to_string(read) + "\n}\n";
}

TEST(SortSimplifier, IndicesNothingReadsAreDropped) {
  SortSimplifier pass;
  const auto run = RunSimplification(pass, SortWithIndices(0));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT s = f32[64]{0} sort(x), dimensions={0}, to_apply=greater
    CHECK-NOT: iota(
  )"));
}

TEST(SortSimplifier, ValuesTheComparatorReadsAreKept) {
  SortSimplifier pass;
  const auto run = RunSimplification(pass, SortWithIndices(1));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: sort(x, idx)"));
}

}  // namespace
