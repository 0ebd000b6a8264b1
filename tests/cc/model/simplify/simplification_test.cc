// The model's simplification as a whole (cc/model/simplify/simplification.h):
// XLA's rewrites before fusion, in XLA's order, on a copy.
#include <memory>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "model/simplify/simplification.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;

// A loop of one trip whose body reads a tuple it builds: the loop becomes a
// call, the call is inlined, and the reads of the tuples it leaves fold.
constexpr char kOneTrip[] = R"(HloModule m

body {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[8]{0} exponential(x)
  ROOT t = (s32[], f32[8]{0}) tuple(i1, e)
}

cond {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[8]{0}) tuple(zero, x)
  w = (s32[], f32[8]{0}) while(t), condition=cond, body=body
  ROOT r = f32[8]{0} get-tuple-element(w), index=1
}
)";

TEST(Simplification, LoopOfOneTripBecomesItsBodyInline) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kOneTrip);
  const exla::SimplifiedModule simplified = exla::SimplifyAsXla(*module);
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*simplified.module), R"(
    CHECK:      ENTRY e {
    CHECK-NEXT:   x = f32[8]{0} parameter(0)
    CHECK-NEXT:   ROOT {{.*}} = f32[8]{0} exponential(x)
    CHECK-NEXT: }
  )"));
}

TEST(Simplification, TheModuleItselfIsLeftAsItWas) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kOneTrip);
  const std::string before = exla::PrintHloModule(*module);
  exla::SimplifyAsXla(*module);
  EXPECT_EQ(exla::PrintHloModule(*module), before);
}

}  // namespace
