// The copy XLA's layout assignment makes of a loop's initial state that
// comes transposed (cc/model/expand/loop_state_layout.h). The figure was
// checked against XLA CPU's buffer assignment
// (exla.bridge.xla.planned_memory).
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/parser.h"
#include "model/expand/loop_state_layout.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

// tanh(x^T) for x of 204 x 161 f64 (262,752 bytes), the state of a loop
// that takes its sine 5 times, declared column-major; the sum of the result.
constexpr char kTransposedLoopState[] = R"(HloModule m

add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] add(a, b)
}

body {
  s = (s32[], f64[161,204]{0,1}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  x = f64[161,204]{0,1} get-tuple-element(s), index=1
  y = f64[161,204]{0,1} sine(x)
  ROOT t = (s32[], f64[161,204]{0,1}) tuple(n, y)
}

cond {
  s = (s32[], f64[161,204]{0,1}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}

ENTRY main {
  p = f64[204,161]{1,0} parameter(0)
  tr = f64[161,204]{0,1} transpose(p), dimensions={1,0}
  th = f64[161,204]{0,1} tanh(tr)
  z = s32[] constant(0)
  init = (s32[], f64[161,204]{0,1}) tuple(z, th)
  w = (s32[], f64[161,204]{0,1}) while(init), condition=cond, body=body
  x = f64[161,204]{0,1} get-tuple-element(w), index=1
  z2 = f64[] constant(0)
  ROOT r = f64[] reduce(x, z2), dimensions={0,1}, to_apply=add
}
)";

TEST(MemoryModel, TransposedLoopStateIsCopiedIntoTheLoopsLayout) {
  // XLA writes tanh(x)^T as a bitcast of a transpose, column-major, and
  // copies it into the loop's row-major state while it is still alive: two
  // 262,752-byte buffers at once beside the 262,752-byte parameter (XLA
  // plans 788,364 bytes in all, 525,584 of them temporaries).
  const MemoryPrediction p = PredictMemory(kTransposedLoopState);
  EXPECT_EQ(p.peak_bytes(), 788364);
  EXPECT_EQ(p.temp_bytes, 525584);
}

TEST(MemoryModel, BareTransposeInLoopStateAddsNoCopy) {
  // A transpose of a parameter read only by the loop's state is a bitcast
  // of the parameter, which XLA copies into the loop's layout: one buffer
  // (XLA plans 263,184 bytes of temporaries), which the model already
  // counts as the transpose's own.
  std::string text = kTransposedLoopState;
  const std::string tanh = "  th = f64[161,204]{0,1} tanh(tr)\n";
  text.erase(text.find(tanh), tanh.size());
  const std::string from = "tuple(z, th)";
  text.replace(text.find(from), from.size(), "tuple(z, tr)");
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  const exla::HloInstruction* loop = nullptr;
  for (const auto& instruction : module->entry()->instructions()) {
    if (instruction->Is(exla::HloOpcode::kWhile)) loop = instruction.get();
  }
  EXPECT_TRUE(loop != nullptr);
  EXPECT_EQ(exla::LoopStateLayoutCopyBytes(*loop), 0);
}

}  // namespace
