// XLA's algebraic simplifier folding a transpose into the reduce that reads
// it (cc/model/simplify/reduce_of_transpose.h).
#include <string>

#include "model/simplify/reduce_of_transpose.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ReduceOfTranspose;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// The column sums, in `type`, of x (f32[8,16]) transposed, read directly
// or through `cast` (a conversion of the transpose to `type`).
std::string ColumnSumOfATranspose(const std::string& type, bool cast) {
  std::string text = R"(HloModule m

add {
  p = )" + type + R"([] parameter(0)
  q = )" + type + R"([] parameter(1)
  ROOT r = )" + type + R"([] add(p, q)
}

ENTRY e {
  x = f32[8,16]{1,0} parameter(0)
  t = f32[16,8]{1,0} transpose(x), dimensions={1,0}
)";
  if (cast) text += "  c = " + type + "[16,8]{1,0} convert(t)\n";
  return text + "  zero = " + type + "[] constant(0)\n  ROOT s = " + type + "[8]{0} reduce(" +
         (cast ? "c" : "t") + ", zero), dimensions={0}, to_apply=add\n}\n";
}

TEST(ReduceOfTranspose, ColumnSumOfATransposeSumsTheRows) {
  ReduceOfTranspose pass;
  const auto run = RunSimplification(pass, ColumnSumOfATranspose("f32", false));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT s = f32[8]{0} reduce(x, zero), dimensions={1}, to_apply=add
    CHECK-NOT: transpose
  )"));
}

TEST(ReduceOfTranspose, ConversionToAnotherTypeBetweenIsLeft) {
  // The reduce reads the conversion, not the transpose. (XLA would look
  // through a conversion to the type the values already have; the model
  // does not yet: folding there moved fuzz_43000000120 rewritten out of the
  // band and fuzz_43000000147 rewritten to 0.909x, for reasons not found.)
  ReduceOfTranspose pass;
  const auto run = RunSimplification(pass, ColumnSumOfATranspose("f64", true));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: reduce(c, zero), dimensions={0}"));
}

}  // namespace
