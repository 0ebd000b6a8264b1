// XLA's constant folding (cc/model/simplify/constant_folding.h).
#include "model/simplify/constant_folding.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ConstantFolding;
using exla_test::FileCheck;
using exla_test::RunSimplification;

TEST(ConstantFolding, ExpressionOfLiteralsBecomesALiteral) {
  ConstantFolding pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = f32[4,4]{1,0} parameter(0)
  c = f32[4,4]{1,0} constant({...})
  t = f32[4,4]{1,0} transpose(c), dimensions={1,0}
  ROOT r = f32[4,4]{1,0} add(x, t)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     t.folded = f32[4,4]{1,0} constant(folded_
    CHECK:     ROOT r = f32[4,4]{1,0} add(x, t.folded)
    CHECK-NOT: transpose(
  )"));
}

TEST(ConstantFolding, EqualExpressionsFoldIntoEqualLiterals) {
  ConstantFolding pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  c = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[4]{0} negate(c)
  b = f32[4]{0} negate(c)
  ROOT r = (f32[4]{0}, f32[4]{0}) tuple(a, b)
}
)");
  ASSERT_TRUE(run.changed);
  const exla::HloInstruction* root = run.module->entry()->root();
  EXPECT_EQ(root->operand(0)->payload(), root->operand(1)->payload());
}

TEST(ConstantFolding, ReshapeOfALiteralKeepsItsValues) {
  // A column of a band mask made a vector: the folded literal holds the
  // values, in the same order, which XLA's simplifier then reads
  // (regular_literals.h); other expressions stay digests.
  ConstantFolding pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  x = s32[4]{0} parameter(0)
  c = s32[4,1]{1,0} constant({ {0}, {1}, {2}, {3} })
  v = s32[4]{0} reshape(c)
  ROOT r = s32[4]{0} add(x, v)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: v.folded = s32[4]{0} constant({0, 1, 2, 3})
    CHECK: ROOT r = s32[4]{0} add(x, v.folded)
  )"));
}

TEST(ConstantFolding, BroadcastAndTheRootAreNotFolded) {
  // A broadcast would only grow; a folded root would still be copied into
  // the result's buffer.
  ConstantFolding pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  c = f32[] constant(2)
  b = f32[64]{0} broadcast(c), dimensions={}
  ROOT n = f32[64]{0} negate(b)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
