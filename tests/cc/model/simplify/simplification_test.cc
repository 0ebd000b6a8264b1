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

}  // namespace
