// Where the memory model writes a value over the buffer of one it reads
// (cc/model/buffers/in_place.cc), checked against XLA's buffer assignment.
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

TEST(InPlace, ChainOfOutlinedLoopsWritesTheResultsAllocation) {
  // A softmax of log(x y): the log and the exponential are each read by a
  // reduce as well, so each is a loop of its own, and each loop reads and
  // writes 512 KiB, so XLA outlines it for threads. The chain ends in the
  // result: buffer assignment places the division there, then the
  // exponential (its use at the division's call comes before the
  // division's loop), then the log and the product the same way. XLA: temp
  // 17408 (the reduces' partial sums and rows), the product and all three
  // loops in the 512 KiB result.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[256,64]{1,0} parameter(0)
  y = f32[64,512]{1,0} parameter(1)
  d = f32[256,512]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  l = f32[256,512]{1,0} log(d)
  low = f32[] constant(-inf)
  top = f32[256]{0} reduce(l, low), dimensions={1}, to_apply=max
  tops = f32[256,512]{1,0} broadcast(top), dimensions={0}
  shifted = f32[256,512]{1,0} subtract(l, tops)
  x2 = f32[256,512]{1,0} exponential(shifted)
  zero = f32[] constant(0)
  total = f32[256]{0} reduce(x2, zero), dimensions={1}, to_apply=sum
  totals = f32[256,512]{1,0} broadcast(total), dimensions={0}
  ROOT r = f32[256,512]{1,0} divide(x2, totals)
}
)"));
  EXPECT_EQ(p.output_bytes, 524288);
  EXPECT_EQ(p.temp_bytes, 17408);
}

// d, a GEMM's result, read by the loop c = d + `second`; c feeds a GEMM.
std::string SumOfAProduct(const std::string& second) {
  return R"(HloModule m

ENTRY e {
  a = f32[64,16]{1,0} parameter(0)
  b = f32[16,64]{1,0} parameter(1)
  y = f32[64,4]{1,0} parameter(2)
  d = f32[64,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,64]{1,0} transpose(d), dimensions={1,0}
  c = f32[64,64]{1,0} add(d, )" + second + R"()
  ROOT p = f32[64,4]{1,0} dot(c, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
}

TEST(InPlace, LoopWritesOverAnOperandItReadsElementwise) {
  // c = d + d reads d at its own index only: XLA writes c over d, which
  // dies there (buffer assignment: temp 16,384, one f32[64,64]).
  EXPECT_EQ(PredictMemory(SumOfAProduct("d")).temp_bytes, 16384);
}

TEST(InPlace, LoopDoesNotWriteOverAnOperandItAlsoReadsTransposed) {
  // c = d + transpose(d) reads d at a second, transposed index: writing c
  // over d would overwrite elements still to be read, so XLA gives c a
  // buffer of its own (buffer assignment: temp 32,768).
  EXPECT_EQ(PredictMemory(SumOfAProduct("t")).temp_bytes, 32768);
}

TEST(InPlace, LoopDoesNotWriteOverAnOutlinedLoopsResult) {
  // s reads and writes 576 KiB, so XLA outlines its loop for threads into
  // a call; r, the next loop (384 KiB: not outlined), is s's last reader
  // and has its shape. XLA's heap simulator lets r take the buffer of an
  // operand only when r reads the instruction that defines the operand's
  // value: s's value is defined inside the call, so r writes a buffer of
  // its own. XLA: temp 393216 (s and r), not the 196608 of one buffer.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[192,256]{1,0} parameter(0)
  y = f32[192,256]{1,0} parameter(1)
  v = f32[256,8]{1,0} parameter(2)
  w = f32[256,2]{1,0} parameter(3)
  ex = f32[192,256]{1,0} exponential(x)
  s = f32[192,256]{1,0} add(ex, y)
  first = f32[192,2]{1,0} dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = f32[192,1]{1,0} slice(first), slice={[0:192], [0:1]}
  col = f32[192]{0} reshape(one)
  cols = f32[192,256]{1,0} broadcast(col), dimensions={0}
  r = f32[192,256]{1,0} subtract(s, cols)
  ROOT second = f32[192,8]{1,0} dot(r, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.output_bytes, 6144);
  EXPECT_EQ(p.temp_bytes, 393216);
}

TEST(InPlace, LoopDoesNotWriteOverAnOperandItAlsoReadsThroughAReshape) {
  // l = ex + reshape(reshape(ex) * y) reads ex at its own index and, through
  // the reshapes, as the rows of another shape: in XLA's fused computation
  // the second read is a bitcast, not elementwise, so l may not overwrite
  // ex (HloDataflowAnalysis::CanShareOperandBufferWithUser). XLA: temp
  // 32,768 (ex and l), not one 16 KiB buffer.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  y = f32[32,128]{1,0} parameter(1)
  w = f32[64,4]{1,0} parameter(2)
  ex = f32[64,64]{1,0} exponential(x)
  zero = f32[] constant(0)
  total = f32[] reduce(ex, zero), dimensions={0,1}, to_apply=sum
  re = f32[32,128]{1,0} reshape(ex)
  p = f32[32,128]{1,0} multiply(re, y)
  rp = f32[64,64]{1,0} reshape(p)
  l = f32[64,64]{1,0} add(ex, rp)
  d = f32[64,4]{1,0} dot(l, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,4]{1,0}, f32[]) tuple(d, total)
}
)"));
  EXPECT_EQ(p.temp_bytes, 32768);
}

// s, a row sum of 572 KiB of squared differences computed in its own loop
// (the product m is also written, for the total t), read by the result's
// loop r directly or through a conversion to its own type.
std::string ResultReadingAnOutlinedSum(bool converted) {
  const std::string c = converted ? "c" : "s";
  std::string text = R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  a = f32[225,4]{1,0} parameter(0)
  b = f32[159,4]{1,0} parameter(1)
  ba = f32[225,159,4]{2,1,0} broadcast(a), dimensions={0,2}
  bb = f32[225,159,4]{2,1,0} broadcast(b), dimensions={1,2}
  d = f32[225,159,4]{2,1,0} subtract(ba, bb)
  m = f32[225,159,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  s = f32[225,159]{1,0} reduce(m, zero), dimensions={2}, to_apply=sum
)";
  if (converted) text += "  c = f32[225,159]{1,0} convert(s)\n";
  text += "  t = f32[] reduce(" + c + R"(, zero), dimensions={0,1}, to_apply=sum
  tb = f32[225,159]{1,0} broadcast(t), dimensions={}
  gt = pred[225,159]{1,0} compare()" + c + R"(, tb), direction=GT
  h = f32[] constant(0.5)
  hb = f32[225,159]{1,0} broadcast(h), dimensions={}
  sh = f32[225,159]{1,0} multiply(hb, )" + c + R"()
  ROOT r = f32[225,159]{1,0} select(gt, )" + c + ", sh)\n}\n";
  return text;
}

TEST(InPlace, ResultLoopDoesNotTakeTheBufferOfAnOutlinedLoop) {
  // s's loop recomputes the squared differences (XLA copies m into it), so
  // its arithmetic, not its 146 KiB of bytes, makes XLA outline it for
  // threads. The result's loop r is too small to be outlined: it does not
  // read the call that defines s's value, so it cannot take s's buffer, and
  // only an outlined loop joins the result's allocation that way. XLA: temp
  // 715,504 (m and s), not m alone.
  const MemoryPrediction p = PredictMemory(ResultReadingAnOutlinedSum(false));
  EXPECT_GE(p.temp_bytes, 715504);
  EXPECT_LE(p.temp_bytes, 716000);
}

TEST(InPlace, ResultLoopDoesNotTakeAnOutlinedLoopsBufferThroughAConversion) {
  // As above, with s read through a conversion to its own type, which XLA's
  // simplifier removes: the buffer is still the outlined loop's. XLA: temp
  // 715,504.
  const MemoryPrediction p = PredictMemory(ResultReadingAnOutlinedSum(true));
  EXPECT_GE(p.temp_bytes, 715504);
  EXPECT_LE(p.temp_bytes, 716000);
}

}  // namespace
