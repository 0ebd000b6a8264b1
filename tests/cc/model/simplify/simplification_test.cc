// The model's simplification as a whole (cc/model/simplify/simplification.h):
// XLA's rewrites before fusion, in XLA's order, on a copy.
#include <memory>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "model/simplify/simplification.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;

// A loop of one trip: it becomes a call, the call is inlined, and the reads
// of the tuples it leaves fold.
TEST(Simplification, LoopOfOneTripBecomesItsBodyInline) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(exla_test::CountedLoop(1));
  const exla::SimplifiedModule simplified = exla::SimplifyAsXla(*module);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*simplified.module), R"(
    CHECK:      ENTRY e {
    CHECK-NEXT:   x = f32[8]{0} parameter(0)
    CHECK-NEXT:   ROOT {{.*}} = f32[8]{0} exponential(x)
    CHECK-NEXT: }
  )"));
}

TEST(Simplification, TheModuleItselfIsLeftAsItWas) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(exla_test::CountedLoop(1));
  const std::string before = exla::PrintHloModule(*module);
  exla::SimplifyAsXla(*module);
  EXPECT_EQ(exla::PrintHloModule(*module), before);
}

// XLA's simplification runs to a fixed point: once the loop of one trip is
// inlined and its tuple reads fold, the offset 0 * 8 is a literal, and the
// dynamic slice at a literal offset a static slice, which reads x alone
// (dynamic_slice_of_literals.h).
TEST(Simplification, SliceOfAnInlinedTripAtALiteralOffsetIsStatic) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

body {
  p = (s32[], f32[64,2]{1,0}, f32[8,2]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64,2]{1,0} get-tuple-element(p), index=1
  size = s32[] constant(8)
  off = s32[] multiply(i, size)
  zero = s32[] constant(0)
  s = f32[8,2]{1,0} dynamic-slice(x, off, zero), dynamic_slice_sizes={8,2}
  e = f32[8,2]{1,0} exponential(s)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,2]{1,0}, f32[8,2]{1,0}) tuple(i1, x, e)
}

cond {
  p = (s32[], f32[64,2]{1,0}, f32[8,2]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[64,2]{1,0} parameter(0)
  a = f32[8,2]{1,0} parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[64,2]{1,0}, f32[8,2]{1,0}) tuple(zero, x, a)
  w = (s32[], f32[64,2]{1,0}, f32[8,2]{1,0}) while(t), condition=cond, body=body
  ROOT r = f32[8,2]{1,0} get-tuple-element(w), index=2
}
)");
  const exla::SimplifiedModule simplified = exla::SimplifyAsXla(*module);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*simplified.module), R"(
    CHECK:     ENTRY e {
    CHECK-NOT: dynamic-slice(
    CHECK:     [[S:[^ ]+]] = f32[8,2]{1,0} slice(x), slice={[0:8], [0:2]}
    CHECK:     exponential([[S]])
  )"));
}

}  // namespace
