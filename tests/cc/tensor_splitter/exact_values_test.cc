// Values whose bits do not depend on how a loop slices them
// (cc/passes/tensor_splitter/exact_values.h), one behaviour per test.
#include <memory>
#include <string>

#include "ir/module.h"
#include "ir/parser.h"
#include "passes/tensor_splitter/exact_values.h"
#include "tests/cc/test_harness.h"

namespace {

// TensorFlow's one-hot labels of its sparse cross entropy, and three values
// that are not exact: an exponential, a product added (a fused multiply-add
// candidate), a dot.
const char kModule[] = R"(HloModule m

ENTRY main {
  labels = s32[8]{0} parameter(0)
  x = f32[8,16]{1,0} parameter(1)
  bl = s32[8,16]{1,0} broadcast(labels), dimensions={0}
  iota = s32[8,16]{1,0} iota(), iota_dimension=1
  hot = pred[8,16]{1,0} compare(bl, iota), direction=EQ
  one = f32[] constant(1)
  zero = f32[] constant(0)
  ones = f32[8,16]{1,0} broadcast(one), dimensions={}
  zeros = f32[8,16]{1,0} broadcast(zero), dimensions={}
  onehot = f32[8,16]{1,0} select(hot, ones, zeros)
  nan = f32[] constant(nan)
  nans = f32[8,16]{1,0} broadcast(nan), dimensions={}
  masked = f32[8,16]{1,0} add(onehot, nans)
  e = f32[8,16]{1,0} exponential(x)
  p = f32[8,16]{1,0} multiply(x, x)
  fma = f32[8,16]{1,0} add(p, x)
  d = f32[8,8]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT r = (f32[8,16]{1,0}, f32[8,16]{1,0}, f32[8,16]{1,0}, f32[8,8]{1,0}) tuple(masked, e, fma, d)
}
)";

bool Exact(const std::string& name) {
  static std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kModule);
  return exla::ComputedExactly(module->entry()->FindInstruction(name));
}

TEST(ExactValues, OneHotLabelsAreExact) {
  EXPECT_TRUE(Exact("onehot"));
  EXPECT_TRUE(Exact("masked"));  // a correctly rounded add of exact values
}

TEST(ExactValues, TranscendentalsAreNot) { EXPECT_FALSE(Exact("e")); }

TEST(ExactValues, AddOfAProductIsNot) {
  // XLA may fuse it into a multiply-add in one slice and not another.
  EXPECT_FALSE(Exact("fma"));
}

TEST(ExactValues, DotsAreNot) { EXPECT_FALSE(Exact("d")); }

}  // namespace
