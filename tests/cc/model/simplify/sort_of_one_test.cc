// XLA sorting nothing along a dimension of one element
// (cc/model/simplify/sort_of_one.h).
#include <string>

#include "model/simplify/sort_of_one.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::SortOfOne;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// The top-k (k = 1) of x, `columns` wide, both results read.
std::string TopOneOf(const std::string& columns) {
  const std::string keys = "f32[193," + columns + "]{1,0}";
  return R"(HloModule m

ENTRY e {
  x = )" + keys + R"( parameter(0)
  t = (f32[193,1]{1,0}, s32[193,1]{1,0}) topk(x), k=1, largest=true
  v = f32[193,1]{1,0} get-tuple-element(t), index=0
  i = s32[193,1]{1,0} get-tuple-element(t), index=1
  ROOT r = (f32[193,1]{1,0}, s32[193,1]{1,0}) tuple(v, i)
}
)";
}

TEST(SortOfOne, TopOneOfOneColumnIsTheColumnAndZeros) {
  SortOfOne pass;
  const auto run = RunSimplification(pass, TopOneOf("1"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     t.indices = s32[193,1]{1,0} iota(), iota_dimension=1
    CHECK:     ROOT r = (f32[193,1]{1,0}, s32[193,1]{1,0}) tuple(x, t.indices)
    CHECK-NOT: topk(
  )"));
}

TEST(SortOfOne, TopOneOfSeveralColumnsIsLeft) {
  SortOfOne pass;
  const auto run = RunSimplification(pass, TopOneOf("8"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: t = (f32[193,1]{1,0}, s32[193,1]{1,0}) topk(x), k=1"));
}

// Keys and values sorted along dimension 1, `columns` wide.
std::string SortOf(const std::string& columns) {
  const std::string keys = "f32[16," + columns + "]{1,0}";
  const std::string values = "s32[16," + columns + "]{1,0}";
  return R"(HloModule m

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY e {
  x = )" + keys + R"( parameter(0)
  y = )" + values + R"( parameter(1)
  s = ()" + keys + ", " + values + R"() sort(x, y), dimensions={1}, to_apply=less
  k = )" + keys + R"( get-tuple-element(s), index=0
  ROOT v = )" + values + R"( get-tuple-element(s), index=1
}
)";
}

TEST(SortOfOne, SortAlongOneElementIsItsOperands) {
  SortOfOne pass;
  const auto run = RunSimplification(pass, SortOf("1"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: sort(
    CHECK:     y = s32[16,1]{1,0} parameter(1)
    CHECK-NOT: sort(
  )"));
  EXPECT_EQ(run.module->entry()->root()->name(), "y");
}

TEST(SortOfOne, SortAlongSeveralElementsIsLeft) {
  SortOfOne pass;
  const auto run = RunSimplification(pass, SortOf("4"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: s = (f32[16,4]{1,0}, s32[16,4]{1,0}) sort(x, y), dimensions={1}"));
}

}  // namespace
