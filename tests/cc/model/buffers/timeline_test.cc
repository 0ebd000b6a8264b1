// The memory timeline (PredictMemoryTimeline, model/xla_cpu_model.h): intermediate bytes alive at each
// step of the model's schedule, and the buffers named at the busiest step.
#include <algorithm>
#include <string>
#include <vector>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryTimeline;
using exla::PredictMemoryTimeline;

// The step at which instruction `name` runs (its first, for a loop).
int64_t StepOf(const MemoryTimeline& t, const std::string& name) {
  return std::find(t.instructions.begin(), t.instructions.end(), name) - t.instructions.begin();
}

// x·xᵀ is a 1 MiB temporary: written by `big`, last read by the root.
constexpr char kKernelMatvec[] = R"(HloModule m

ENTRY e {
  x = f32[512,4]{1,0} parameter(0)
  v = f32[512,1]{1,0} parameter(1)
  big = f32[512,512]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT r = f32[512,1]{1,0} dot(big, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(MemoryTimeline, IntermediateIsLiveFromItsWriterToItsLastReader) {
  const MemoryTimeline t = PredictMemoryTimeline(std::string(kKernelMatvec));
  const int64_t big = StepOf(t, "big"), root = StepOf(t, "r");
  ASSERT_LT(root, static_cast<int64_t>(t.live_bytes.size()));
  EXPECT_LT(big, root);
  for (int64_t step = 0; step < static_cast<int64_t>(t.live_bytes.size()); ++step) {
    const bool alive = big <= step && step <= root;
    EXPECT_EQ(t.live_bytes[step], alive ? 512 * 512 * 4 : 0);
  }
}

TEST(MemoryTimeline, PeakNamesTheLargestBuffer) {
  const MemoryTimeline t = PredictMemoryTimeline(std::string(kKernelMatvec));
  ASSERT_EQ(t.peak_buffers.size(), 1u);
  EXPECT_EQ(t.peak_buffers[0].instruction, "big");
  EXPECT_EQ(t.peak_buffers[0].opcode, "dot");
  EXPECT_EQ(t.peak_buffers[0].shape, "f32[512,512]");
  EXPECT_EQ(t.peak_buffers[0].bytes, 512 * 512 * 4);
  EXPECT_EQ(t.peak_buffers[0].computation, "e");
  EXPECT_EQ(t.entry, "e");  // a picture names only the other computations
  EXPECT_EQ(t.peak_steps.front(), StepOf(t, "big"));
  EXPECT_EQ(t.peak_steps.back(), StepOf(t, "r"));
}

TEST(MemoryTimeline, BaselineIsTheProgramsOwnArgumentsAndOutputs) {
  const MemoryTimeline t = PredictMemoryTimeline(std::string(kKernelMatvec));
  EXPECT_EQ(t.baseline_bytes, 512 * 4 * 4 + 512 * 4 + 512 * 4);
  EXPECT_EQ(t.baseline_bytes + t.prediction.temp_bytes, t.prediction.peak_bytes());
}

TEST(MemoryTimeline, MaximumIsTheModelsLiveBytes) {
  // Three temporaries, at most two alive together: the curve's top is the
  // model's live_bytes, and the packed heap is no smaller. (The result is
  // too small for any of them to take its allocation.)
  const MemoryTimeline t = PredictMemoryTimeline(std::string(R"(HloModule m

ENTRY e {
  x = f32[128,128]{1,0} parameter(0)
  y = f32[128,64]{1,0} parameter(1)
  d1 = f32[128,128]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[128,128]{1,0} dot(d1, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[128,128]{1,0} dot(d2, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d4 = f32[128,64]{1,0} dot(d3, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  const int64_t top = *std::max_element(t.live_bytes.begin(), t.live_bytes.end());
  EXPECT_EQ(top, t.prediction.live_bytes);
  EXPECT_EQ(top, 2 * 65536);
  EXPECT_GE(t.prediction.temp_bytes, top);
  // d2 is written while d1 is read, and d3 while d2 is: two peaks.
  EXPECT_EQ(t.peak_steps.size(), 2u);
}

TEST(MemoryTimeline, PeakBuffersLargestFirstAndCapped) {
  const std::string text = R"(HloModule m

ENTRY e {
  x = f32[128,128]{1,0} parameter(0)
  v = f32[128,1]{1,0} parameter(1)
  a = f32[128,128]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[128,1]{1,0} dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[128,1]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const MemoryTimeline all = PredictMemoryTimeline(text);
  ASSERT_EQ(all.peak_buffers.size(), 2u);
  EXPECT_EQ(all.peak_buffers[0].instruction, "a");
  EXPECT_EQ(all.peak_buffers[1].instruction, "b");
  EXPECT_EQ(all.peak_buffers[0].bytes + all.peak_buffers[1].bytes, all.prediction.live_bytes);
  const MemoryTimeline one = PredictMemoryTimeline(text, /*max_named=*/1);
  ASSERT_EQ(one.peak_buffers.size(), 1u);
  EXPECT_EQ(one.peak_buffers[0].instruction, "a");
}

TEST(MemoryTimeline, LoopBodyRunsBetweenTheLoopsTwoSteps) {
  // The body is walked once, inside the loop's span, and its temporary (the
  // exponential the dot reads) is named in the body's computation.
  const MemoryTimeline t = PredictMemoryTimeline(std::string(R"(HloModule m

cond {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}

body {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[64,64]{1,0} get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ex = f32[64,64]{1,0} exponential(m)
  prod = f32[64,64]{1,0} dot(ex, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[64,64]{1,0}) tuple(next, prod)
}

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[64,64]{1,0}) tuple(i0, x)
  w = (s32[], f32[64,64]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[64,64]{1,0} get-tuple-element(w), index=1
}
)"));
  const int64_t loop = StepOf(t, "w");
  const auto last = std::find(t.instructions.rbegin(), t.instructions.rend(), "w");
  const int64_t loop_end = t.instructions.rend() - last - 1;
  EXPECT_LT(loop, StepOf(t, "ex"));
  EXPECT_LT(StepOf(t, "prod"), loop_end);
  bool named = false;
  for (const auto& buffer : t.peak_buffers) {
    named = named || (buffer.instruction == "ex" && buffer.computation == "body");
  }
  EXPECT_TRUE(named);
}

}  // namespace
