// Rules of the remove-copies pass (cc/passes/remove_copies.h).
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::PassRun;
using exla_test::RunPass;

constexpr char kPass[] = "remove-copies";

TEST(RemoveCopies, CopyReplacedByItsOperand) {
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8,4]{1,0} parameter(0)
  c = f32[8,4]{1,0} copy(p0)
  ROOT r = f32[8,4]{1,0} negate(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      p0 = f32[8,4]{1,0} parameter(0)
    CHECK-NEXT: ROOT r = f32[8,4]{1,0} negate(p0)
    CHECK-NOT:  copy(
  )"));
}

TEST(RemoveCopies, LayoutChangingCopyBecomesReshape) {
  // The copy asks for another layout: a reshape to the same dimensions
  // keeps that layout without a copy.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8,4]{1,0} parameter(0)
  c = f32[8,4]{0,1} copy(p0)
  ROOT r = f32[8,4]{0,1} negate(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     [[R:[a-z0-9.]+]] = f32[8,4]{0,1} reshape(p0)
    CHECK:     ROOT r = f32[8,4]{0,1} negate([[R]])
    CHECK-NOT: copy(
  )"));
}

TEST(RemoveCopies, ChainOfCopiesRemoved) {
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  c1 = f32[8]{0} copy(p0)
  c2 = f32[8]{0} copy(c1)
  ROOT r = f32[8]{0} add(c1, c2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT r = f32[8]{0} add(p0, p0)\nCHECK-NOT: copy("));
}

TEST(RemoveCopies, CopyAtRootReplaced) {
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  n = f32[8]{0} negate(p0)
  ROOT c = f32[8]{0} copy(n)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT n = f32[8]{0} negate(p0)\nCHECK-NOT: copy("));
}

TEST(RemoveCopies, CopyWithControlEdgeKept) {
  // A copy that orders something is not just a value.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  c = f32[8]{0} copy(p0)
  ROOT r = f32[8]{0} negate(p0), control-predecessors={c}
}
)");
}

TEST(RemoveCopies, CopyInsideCalledComputationRemoved) {
  const PassRun run = RunPass(kPass, R"(HloModule m

f {
  q = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} copy(q)
}

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  ROOT k = f32[8]{0} call(p0), to_apply=f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: f {\nCHECK-NEXT: ROOT q = f32[8]{0} parameter(0)"));
}

TEST(RemoveCopies, ModuleWithoutCopiesUnchanged) {
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} negate(p0)
}
)");
}

}  // namespace
