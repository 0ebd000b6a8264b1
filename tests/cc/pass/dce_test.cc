// Rules of the dce pass (cc/pass/dce.h): what is dead goes, what has an
// effect or defines the signature stays, unreachable computations go.
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::PassRun;
using exla_test::RunPass;

constexpr char kPass[] = "dce";

TEST(Dce, RemovesUnusedInstruction) {
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  dead = f32[8]{0} negate(p0)
  ROOT r = f32[8]{0} exponential(p0)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      p0 = f32[8]{0} parameter(0)
    CHECK-NEXT: ROOT r = f32[8]{0} exponential(p0)
    CHECK-NOT:  dead
  )"));
}

TEST(Dce, RemovesDeadChainInOneRun) {
  // b is dead, which makes a dead: one run removes both.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  a = f32[8]{0} negate(p0)
  b = f32[8]{0} add(a, a)
  ROOT r = f32[8]{0} exponential(p0)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK-NOT: negate(\nCHECK-NOT: add("));
}

TEST(Dce, KeepsUnusedParameters) {
  // Parameters are the computation's signature, used or not.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  unused = f32[8]{0} parameter(1)
  ROOT r = f32[8]{0} negate(p0)
}
)");
}

TEST(Dce, KeepsSideEffectingInstructions) {
  // A custom call that says it has a side effect, and a token, stay; an
  // ordinary custom call nobody uses goes.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  printed = f32[8]{0} custom-call(p0), custom_call_target="print", custom_call_has_side_effect=true
  pure = f32[8]{0} custom-call(p0), custom_call_target="pure"
  tok = token[] after-all()
  ROOT r = f32[8]{0} negate(p0)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-DAG: printed = f32[8]{0} custom-call(p0), custom_call_target="print"
    CHECK-DAG: tok = token[] after-all()
    CHECK-NOT: custom_call_target="pure"
  )"));
}

TEST(Dce, KeepsUnusedInstructionOfUnknownOpcode) {
  // exla cannot know what an opcode outside its table does: it might be a
  // new collective or a send, so an unused one stays.
  const PassRun run = RunPass(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  future = f32[8]{0} some-future-op(p0)
  dead = f32[8]{0} exponential(p0)
  ROOT r = f32[8]{0} negate(p0)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: future = f32[8]{0} some-future-op(p0)
    CHECK-NOT: exponential
  )"));
}

TEST(Dce, KeepsCallOfComputationWithSideEffect) {
  // The call's result is unused, but what it calls has an effect.
  ExpectUnchanged(kPass, R"(HloModule m

effect {
  q = f32[8]{0} parameter(0)
  ROOT log = f32[8]{0} custom-call(q), custom_call_target="log", custom_call_has_side_effect=true
}

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  k = f32[8]{0} call(p0), to_apply=effect
  ROOT r = f32[8]{0} negate(p0)
}
)");
}

TEST(Dce, RemovesCallOfPureComputationAndTheComputation) {
  const PassRun run = RunPass(kPass, R"(HloModule m

pure {
  q = f32[8]{0} parameter(0)
  ROOT n = f32[8]{0} negate(q)
}

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  k = f32[8]{0} call(p0), to_apply=pure
  ROOT r = f32[8]{0} exponential(p0)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK-NOT: call(\nCHECK-NOT: pure {"));
}

TEST(Dce, KeepsInstructionWithControlSuccessor) {
  // `first` is unused, but r is ordered after it.
  ExpectUnchanged(kPass, R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  first = f32[8]{0} negate(p0)
  ROOT r = f32[8]{0} exponential(p0), control-predecessors={first}
}
)");
}

TEST(Dce, RemovesUnreachableComputation) {
  const PassRun run = RunPass(kPass, R"(HloModule m

unused {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(p0, zero), dimensions={0}, to_apply=sum
}
)");
  EXPECT_TRUE(run.changed);
  // The reducer is reachable through to_apply and stays.
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: unused {
    CHECK:     sum {
    CHECK:     ENTRY main {
  )"));
}

TEST(Dce, RemovesDeadCodeInsideLoopBody) {
  const PassRun run = RunPass(kPass, R"(HloModule m

body {
  s = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8]{0} get-tuple-element(s), index=1
  dead = f32[8]{0} negate(v)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8]{0}) tuple(next, v)
}

cond {
  s = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]{0}) tuple(zero, p0)
  w = (s32[], f32[8]{0}) while(init), condition=cond, body=body
  ROOT r = f32[8]{0} get-tuple-element(w), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     body {
    CHECK-NOT: negate(
    CHECK:     ROOT t =
    CHECK:     ENTRY main {
    CHECK:     while(init), condition=cond, body=body
  )"));
}

TEST(Dce, LiveModuleUnchanged) {
  ExpectUnchanged(kPass, R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[4,3]{1,0} parameter(0)
  y = f32[4,3]{1,0} parameter(1)
  m = f32[4,3]{1,0} multiply(x, y)
  zero = f32[] constant(0)
  ROOT r = f32[4]{0} reduce(m, zero), dimensions={1}, to_apply=sum
}
)");
}

}  // namespace
