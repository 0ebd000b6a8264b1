// XLA's conditional simplifier on cheap conditionals
// (cc/model/simplify/conditional_to_select.h).
#include <string>

#include "model/simplify/conditional_to_select.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ConditionalToSelect;
using exla_test::FileCheck;
using exla_test::RunSimplification;

std::string Conditional(const std::string& false_op) {
  return R"(HloModule m

on_true {
  t = (f32[8,8]{1,0}) parameter(0)
  a = f32[8,8]{1,0} get-tuple-element(t), index=0
  ROOT s = f32[8,8]{1,0} sine(a)
}

on_false {
  t = (f32[8,8]{1,0}) parameter(0)
  a = f32[8,8]{1,0} get-tuple-element(t), index=0
  ROOT c = f32[8,8]{1,0} )" + false_op + R"(
}

ENTRY e {
  x = f32[8,8]{1,0} parameter(0)
  p = pred[] parameter(1)
  t = (f32[8,8]{1,0}) tuple(x)
  ROOT c = f32[8,8]{1,0} conditional(p, t, t), true_computation=on_true, false_computation=on_false
}
)";
}

TEST(ConditionalToSelect, CheapBranchesBothRunAndASelectChooses) {
  ConditionalToSelect pass;
  const auto run = RunSimplification(pass, Conditional("cosine(a)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: [[M:[a-z0-9.]+]] = pred[8,8]{1,0} broadcast(p), dimensions={}
    CHECK: ROOT {{.*}} = f32[8,8]{1,0} select([[M]], {{.*}}, {{.*}})
    CHECK-NOT: conditional(
  )"));
}

TEST(ConditionalToSelect, BranchWithAProductStaysAConditional) {
  ConditionalToSelect pass;
  const auto run = RunSimplification(
      pass, Conditional("dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT c = f32[8,8]{1,0} conditional(p, t, t)"));
}

}  // namespace
