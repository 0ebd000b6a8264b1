// Which values XLA CPU's fusion folds into their readers
// (cc/model/fusion/instruction_fusion.h): here, the readers that are a
// convolution's transposed operand copies, tree reductions, and elementwise
// values read through a broadcast.
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "model/fusion/instruction_fusion.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::Holding;
using exla::HoldingOf;

// a = g + h, summed and read by the convolution `convolution` (of x, a
// and k, with result shape `result`).
std::string ConvolutionOfASum(const std::string& convolution, const std::string& result) {
  return R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[4,12,12,3]{3,2,1,0} parameter(0)
  g = f32[4,12,12,8]{3,2,1,0} parameter(1)
  h = f32[4,12,12,8]{3,2,1,0} parameter(2)
  k = f32[3,3,8,2]{3,2,1,0} parameter(3)
  a = f32[4,12,12,8]{3,2,1,0} add(g, h)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(a, zero), dimensions={0,1,2}, to_apply=add
  c = )" + result + " " + convolution + R"(
  ROOT t = (f32[8]{0}, )" + result + R"() tuple(s, c)
}
)";
}

Holding HoldingOfA(const std::string& text) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  return HoldingOf(*module->entry()->FindInstruction("a"));
}

TEST(InstructionFusion, OperandReadThroughALayoutCopyIsFusedIntoTheCopy) {
  EXPECT_TRUE(HoldingOfA(ConvolutionOfASum(
                  "convolution(x, a), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf",
                  "f32[3,3,3,8]{3,2,1,0}")) == Holding::kFused);
}

TEST(InstructionFusion, OperandAConvolutionReadsAsItIsHasABuffer) {
  // a is the input, in Eigen's order (b01f): the convolution reads its buffer.
  EXPECT_TRUE(HoldingOfA(ConvolutionOfASum(
                  "convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
                  "f32[4,12,12,2]{3,2,1,0}")) == Holding::kOwn);
}

// s sums 256 elements of a per row: a tree reduction, read by the add r.
constexpr char kTreeReductionReadByALoop[] = R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[256,256]{1,0} parameter(0)
  v = f32[256]{0} parameter(1)
  zero = f32[] constant(0)
  s = f32[256]{0} reduce(a, zero), dimensions={1}, to_apply=add
  ROOT r = f32[256]{0} add(s, v)
}
)";

TEST(InstructionFusion, TreeReductionIsAStepOfItsOwn) {
  // Its reduce-window is an instruction of its own in XLA: the reduction is
  // not folded into the loop that reads it.
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kTreeReductionReadByALoop);
  EXPECT_TRUE(HoldingOf(*module->entry()->FindInstruction("s")) == Holding::kOwn);
}

// s = op(a) of 256x256 elements, read through a broadcast (a reader that
// reads each of its elements four times).
Holding HoldingOfElementwiseReadThroughABroadcast(const std::string& op) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

ENTRY e {
  a = f32[256,256]{1,0} parameter(0)
  w = f32[256,256,4]{2,1,0} parameter(1)
  s = f32[256,256]{1,0} )" + op + R"((a)
  b = f32[256,256,4]{2,1,0} broadcast(s), dimensions={0,1}
  ROOT o = f32[256,256,4]{2,1,0} multiply(b, w)
}
)");
  return HoldingOf(*module->entry()->FindInstruction("s"));
}

TEST(InstructionFusion, RealSineReadThroughABroadcastIsCopiedIntoItsReader) {
  // CpuInstructionFusion::IsExpensive calls real cos, sin and tan cheap:
  // XLA plans no buffer for s (temp 0 bytes).
  EXPECT_TRUE(HoldingOfElementwiseReadThroughABroadcast("sine") == Holding::kFused);
  EXPECT_TRUE(HoldingOfElementwiseReadThroughABroadcast("tan") == Holding::kFused);
}

TEST(InstructionFusion, ExponentialReadThroughABroadcastIsWrittenOnce) {
  // An expensive producer is not fused into a reader that reads its
  // elements more than once: XLA writes s (262,144 bytes).
  EXPECT_TRUE(HoldingOfElementwiseReadThroughABroadcast("exponential") == Holding::kOwn);
}

}  // namespace
