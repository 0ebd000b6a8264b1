// Where XLA's fusion stops folding a producer into its readers' loops
// (cc/model/fusion/fusion_duplication.h): here, a value whose emitted code
// keeps no cache (a reduction) with more than one reader. Each figure is
// XLA's buffer assignment (jaxlib 0.7.1) of the same module.
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::PredictMemory;

// r = `producer`, and h = 0.5 * r, both read by the concatenation c (one
// element of the entry's tuple, so that c's loop is not the entry's root).
// `r_read` is what h and c read of r: r itself or its conversion to f32.
std::string ValueConcatenatedWithItsHalf(const std::string& producer, const std::string& r_read = "r") {
  return R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[64,32,8]{2,1,0} parameter(0)
  y = f32[64,32]{1,0} parameter(1)
  zero = f32[] constant(0)
  r = f32[64,32]{1,0} )" + producer + "\n" +
         (r_read == "r" ? "" : "  " + r_read + " = f32[64,32]{1,0} convert(r)\n") + R"(  half = f32[] constant(0.5)
  b = f32[64,32]{1,0} broadcast(half), dimensions={}
  h = f32[64,32]{1,0} multiply()" + r_read + R"(, b)
  c = f32[128,32]{1,0} concatenate()" + r_read + R"(, h), dimensions={0}
  ROOT t = (f32[128,32]{1,0}) tuple(c)
}
)";
}

const char kSum[] = "reduce(x, zero), dimensions={2}, to_apply=sum";

TEST(FusionDuplication, SumWithTwoReadersInOneLoopIsWrittenOut) {
  // c and h both read r: XLA does not fold a reduction into a loop where
  // more than one instruction reads it (the loop would sum again at each
  // read), so r is written out (8,192 bytes; buffer assignment: temp 8,192).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf(kSum)).temp_bytes, 8192);
}

TEST(FusionDuplication, ReadersAreCountedThroughAConversionToItsOwnType) {
  // As above, read through rc = convert(r) to f32, which XLA's simplifier
  // removes: r still has two readers (buffer assignment: temp 8,192).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf(kSum, "rc")).temp_bytes, 8192);
}

TEST(FusionDuplication, ExponentialWithTwoReadersInOneLoopIsFused) {
  // An exponential keeps the elements it computed: XLA folds it into the
  // loop although two instructions read it (buffer assignment: temp 0).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf("exponential(y)")).temp_bytes, 0);
}

}  // namespace
