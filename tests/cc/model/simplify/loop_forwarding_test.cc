// Reads of what a loop leaves unchanged (model/simplify/loop_forwarding.h): XLA
// reads them from the loop's input, so work on them is ready, and runs,
// before the loop.
#include <algorithm>
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/parser.h"
#include "model/simplify/loop_forwarding.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloModule;
using exla::LoopForwarding;
using exla::ParseHloModule;

// `a` rides through the loop unchanged (element 1), the sum of a·a is
// accumulated (element 2); after the loop, `b` multiplies `a` by itself
// again and the result adds the sum. XLA compiles `b` as dot(sine(x), ...)
// and runs it before the loop (its CPU schedule, checked on jaxlib's XLA).
constexpr char kPassThrough[] = R"(HloModule m

body {
  p = (s32[], f32[512,512]{1,0}, f32[512,512]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[512,512]{1,0} get-tuple-element(p), index=1
  acc = f32[512,512]{1,0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[512,512]{1,0} exponential(a)
  d = f32[512,512]{1,0} dot(e, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  acc1 = f32[512,512]{1,0} add(acc, d)
  ROOT t = (s32[], f32[512,512]{1,0}, f32[512,512]{1,0}) tuple(i1, a, acc1)
}

cond {
  p = (s32[], f32[512,512]{1,0}, f32[512,512]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[512,512]{1,0} parameter(0)
  a = f32[512,512]{1,0} sine(x)
  z = f32[] constant(0)
  zb = f32[512,512]{1,0} broadcast(z), dimensions={}
  zero = s32[] constant(0)
  t = (s32[], f32[512,512]{1,0}, f32[512,512]{1,0}) tuple(zero, a, zb)
  w = (s32[], f32[512,512]{1,0}, f32[512,512]{1,0}) while(t), condition=cond, body=body
  g = f32[512,512]{1,0} get-tuple-element(w), index=1
  b = f32[512,512]{1,0} dot(g, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[512,512]{1,0} get-tuple-element(w), index=2
  ROOT o = f32[512,512]{1,0} add(s, b)
}
)";

TEST(LoopForwarding, ReadOfAnUnchangedElementReadsTheLoopsInput) {
  std::unique_ptr<HloModule> module = ParseHloModule(kPassThrough);
  EXPECT_TRUE(LoopForwarding().Run(module.get()));
  const exla::HloInstruction* b = module->entry()->FindInstruction("b");
  ASSERT_TRUE(b != nullptr);
  EXPECT_EQ(b->operand(0)->name(), "a");
  EXPECT_EQ(b->operand(1)->name(), "a");
  EXPECT_TRUE(module->entry()->FindInstruction("g") == nullptr) << "the read is left dead";
}

TEST(LoopForwarding, ReadOfAnElementTheBodyUpdatesStays) {
  std::unique_ptr<HloModule> module = ParseHloModule(kPassThrough);
  LoopForwarding().Run(module.get());
  const exla::HloInstruction* root = module->entry()->root();
  ASSERT_TRUE(root->operand(0)->Is(exla::HloOpcode::kGetTupleElement));
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "w");
  EXPECT_FALSE(LoopForwarding().Run(module.get())) << "nothing left to forward";
}

TEST(LoopForwarding, WorkOnAnUnchangedElementRunsBeforeTheLoopAndStaysAlive) {
  const exla::MemoryTimeline t = exla::PredictMemoryTimeline(std::string(kPassThrough));
  auto step_of = [&](const std::string& name) {
    return std::find(t.instructions.begin(), t.instructions.end(), name) - t.instructions.begin();
  };
  const auto b = step_of("b"), w = step_of("w");
  ASSERT_LT(w, static_cast<decltype(w)>(t.instructions.size()));
  EXPECT_LT(b, w);
  // At the peak, inside the loop, b's MiB is held beside the body's values.
  const bool b_at_peak =
      std::any_of(t.peak_buffers.begin(), t.peak_buffers.end(),
                  [](const exla::TimelineBuffer& buffer) { return buffer.instruction == "b"; });
  EXPECT_TRUE(b_at_peak);
}

}  // namespace
