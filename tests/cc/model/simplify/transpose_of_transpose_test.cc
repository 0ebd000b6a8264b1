// XLA's algebraic simplifier merging a transpose of a transpose
// (cc/model/simplify/transpose_of_transpose.h).
#include <string>

#include "model/simplify/transpose_of_transpose.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::TransposeOfTranspose;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// exp of x transposed by `first`, then by `second`.
std::string TwoTransposes(const std::string& middle, const std::string& first, const std::string& last,
                          const std::string& second) {
  return R"(HloModule m

ENTRY e {
  x = f32[2,3,4]{2,1,0} parameter(0)
  t1 = f32[)" + middle + "]{2,1,0} transpose(x), dimensions={" + first + R"(}
  t2 = f32[)" + last + "]{2,1,0} transpose(t1), dimensions={" + second + R"(}
  ROOT r = f32[)" + last + R"(]{2,1,0} exponential(t2)
}
)";
}

TEST(TransposeOfTranspose, PermutationsThatUndoEachOtherLeaveTheOperand) {
  TransposeOfTranspose pass;
  const auto run = RunSimplification(pass, TwoTransposes("4,2,3", "2,0,1", "2,3,4", "1,2,0"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT r = f32[2,3,4]{2,1,0} exponential(x)
    CHECK-NOT: transpose
  )"));
}

TEST(TransposeOfTranspose, TwoPermutationsBecomeTheirComposition) {
  // t1 is [4,2,3] (x's dimensions 2,0,1); t2 takes t1's 1,0,2: x's 0,2,1.
  TransposeOfTranspose pass;
  const auto run = RunSimplification(pass, TwoTransposes("4,2,3", "2,0,1", "2,4,3", "1,0,2"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     t2.merged = f32[2,4,3]{2,1,0} transpose(x), dimensions={0,2,1}
    CHECK:     ROOT r = f32[2,4,3]{2,1,0} exponential(t2.merged)
  )"));
}

TEST(TransposeOfTranspose, OneTransposeIsLeft) {
  TransposeOfTranspose pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{1,0} transpose(x), dimensions={1,0}
  ROOT r = f32[3,2]{1,0} exponential(t)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
