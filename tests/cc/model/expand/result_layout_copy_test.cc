// The copy XLA's layout assignment makes of an entry result computed
// transposed (cc/model/expand/result_layout_copy.h). Every figure was
// checked against XLA CPU's buffer assignment
// (exla.bridge.xla.planned_memory).
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

// (x + x)^T for x of 142 x 142 f64 (161,312 bytes), beside a vector
// parameter, as the entry's result tuple.
constexpr char kTransposedResult[] = R"(HloModule m

ENTRY e {
  p = f64[142,142]{1,0} parameter(0)
  q = f64[142]{0} parameter(1)
  a = f64[142,142]{1,0} add(p, p)
  t = f64[142,142]{0,1} transpose(a), dimensions={1,0}
  ROOT o = (f64[142,142]{0,1}, f64[142]{0}) tuple(t, q)
}
)";

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(MemoryModel, ComputedTransposeInResultTupleIsCopiedIntoTheResult) {
  // XLA computes (x + x)^T column-major into a temporary of its own and
  // copies it into the row-major result: 161,312 bytes of temporaries
  // beside the result (486,224 bytes in all).
  const MemoryPrediction p = PredictMemory(kTransposedResult);
  EXPECT_EQ(p.temp_bytes, 161312);
  EXPECT_EQ(p.peak_bytes(), 486224);
}

TEST(MemoryModel, UnaryOpOverTransposedParameterInResultTupleIsCopied) {
  // -(x^T): ReshapeMover sinks the transpose below the negation, which XLA
  // then computes column-major and copies (486,224 bytes in all).
  std::string text = Replaced(kTransposedResult, "  a = f64[142,142]{1,0} add(p, p)\n", "");
  text = Replaced(text, "transpose(a)", "transpose(p)");
  text = Replaced(text, "tuple(t, q)", "tuple(n, q)");
  text = Replaced(text, "  ROOT o", "  n = f64[142,142]{0,1} negate(t)\n  ROOT o");
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_EQ(p.temp_bytes, 161312);
  EXPECT_EQ(p.peak_bytes(), 486224);
}

TEST(MemoryModel, TransposedParameterInResultTupleIsCopiedStraightIntoTheResult) {
  // x^T is a bitcast of the parameter, which the copy reads in place: no
  // temporary (324,912 bytes in all).
  std::string text = Replaced(kTransposedResult, "  a = f64[142,142]{1,0} add(p, p)\n", "");
  text = Replaced(text, "transpose(a)", "transpose(p)");
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 324912);
}

TEST(MemoryModel, TransposeOfAValueAnotherLoopReadsIsCopiedStraightIntoTheResult) {
  // exp(x) is read by a sum too, so it is a buffer of its own; its
  // transpose is a bitcast of it, which the copy reads in place: no second
  // 161,312-byte temporary (XLA plans 167,024 bytes of temporaries, exp(x)
  // and the sum's partial sums, 490,808 in all).
  const std::string text = R"(HloModule m

add {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] add(x, y)
}

ENTRY e {
  p = f64[142,142]{1,0} parameter(0)
  e = f64[142,142]{1,0} exponential(p)
  z = f64[] constant(0)
  r = f64[142]{0} reduce(e, z), dimensions={1}, to_apply=add
  t = f64[142,142]{0,1} transpose(e), dimensions={1,0}
  ROOT o = (f64[142,142]{0,1}, f64[142]{0}) tuple(t, r)
}
)";
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_EQ(p.temp_bytes, 167024);
  EXPECT_EQ(p.peak_bytes(), 490808);
}

TEST(MemoryModel, TransposeThatIsTheRootWritesTheResult) {
  // The result's layout constrains the root itself: XLA fuses the
  // transposing copy into the loop that writes the result (322,624 bytes).
  const std::string text = R"(HloModule m

ENTRY e {
  p = f64[142,142]{1,0} parameter(0)
  a = f64[142,142]{1,0} add(p, p)
  ROOT t = f64[142,142]{0,1} transpose(a), dimensions={1,0}
}
)";
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 322624);
}

TEST(MemoryModel, TransposeHeldTwiceInResultTupleAddsNoTemporary) {
  // Copy insertion copies the second element; the transposed temporary dies
  // before that copy is written, in whose allocation XLA places it
  // (483,952 bytes in all, no temporaries).
  std::string text = Replaced(kTransposedResult, "tuple(t, q)", "tuple(t, t)");
  text = Replaced(text, "(f64[142,142]{0,1}, f64[142]{0}) tuple", "(f64[142,142]{0,1}, f64[142,142]{0,1}) tuple");
  text = Replaced(text, "  q = f64[142]{0} parameter(1)\n", "");
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 483952);
}

// Pairwise squared distances of 288 and 152 points in 4 dimensions, their
// sum as a 152 x 288 f32 result transposed (175,104 bytes), and a second
// result computed from a 700,416-byte product of the differences.
constexpr char kTransposedResultBeforeLargeLoop[] = R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[288,4]{1,0} parameter(0)
  b = f32[152,4]{1,0} parameter(1)
  w = f32[152,288]{1,0} parameter(2)
  ab = f32[288,152,4]{2,1,0} broadcast(a), dimensions={0,2}
  bb = f32[288,152,4]{2,1,0} broadcast(b), dimensions={1,2}
  s = f32[288,152,4]{2,1,0} subtract(ab, bb)
  sq = f32[288,152,4]{2,1,0} multiply(s, s)
  zero = f32[] constant(0)
  r = f32[288,152]{1,0} reduce(sq, zero), dimensions={2}, to_apply=add
  t = f32[152,288]{1,0} transpose(r), dimensions={1,0}
  wt = f32[288,152]{1,0} transpose(w), dimensions={1,0}
  wtb = f32[288,152,4]{2,1,0} broadcast(wt), dimensions={0,1}
  big = f32[288,152,4]{2,1,0} multiply(wtb, s)
  big2 = f32[288,152,4]{2,1,0} add(big, big)
  r2 = f32[288,4]{1,0} reduce(big2, zero), dimensions={1}, to_apply=add
  ROOT o = (f32[152,288]{1,0}, f32[288,4]{1,0}) tuple(t, r2)
}
)";

TEST(MemoryModel, ResultCopyRunsWhenTheBreadthFirstScheduleReachesIt) {
  // The copy is ready once the transpose is written, but the 700,416-byte
  // loop was ready first: the transposed temporary is still alive beside it
  // (XLA plans 875,520 bytes of temporaries, 1,237,396 in all).
  const MemoryPrediction p = PredictMemory(kTransposedResultBeforeLargeLoop);
  EXPECT_EQ(p.temp_bytes, 875520);
  EXPECT_EQ(p.peak_bytes(), 1237396);
}

}  // namespace
