// The memory model's predictions that XLA's schedule and buffer assignment
// decide (cc/model/buffers/): how long values live, what shares a buffer
// (loop state, values written in place), the copies and tables beside the
// values, the literals kept, the allocations results lend, the heap. Each
// module is small enough to count its bytes by hand; the corpus test
// (tests/analysis/test_memory_model.py) compares with XLA itself.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/parser.h"
#include "model/buffers/heap_packing.h"
#include "model/buffers/memory_model.h"
#include "model/buffers/schedule.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::BufferLife;
using exla::MemoryPrediction;
using exla::PredictMemory;

TEST(MemoryModel, TemporariesThatDoNotOverlapShareMemory) {
  // d1 dies at d2, d2 dies at the root: at most two are alive together, and
  // the third reuses the first's memory. (The result is smaller than they
  // are, so none of them can take its allocation.)
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[128,128]{1,0} parameter(0)
  y = f32[128,64]{1,0} parameter(1)
  d1 = f32[128,128]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[128,128]{1,0} dot(d1, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[128,128]{1,0} dot(d2, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d4 = f32[128,64]{1,0} dot(d3, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.buffers, 3);
  EXPECT_EQ(p.live_bytes, 2 * 65536);
  EXPECT_EQ(p.temp_bytes, 2 * 65536);
}

TEST(MemoryModel, ConstantsAreCounted) {
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[4]{0} parameter(0)
  c = f32[4]{0} constant({1, 2, 3, 4})
  ROOT r = f32[4]{0} add(x, c)
}
)"));
  EXPECT_EQ(p.constant_bytes, 16);
  EXPECT_EQ(p.peak_bytes(), 16 + 16 + 16);
}

TEST(MemoryModel, AliasedResultIsNotCountedTwice) {
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY e {
  x = f32[100]{0} parameter(0)
  n = f32[100]{0} negate(x)
  z = f32[] constant(0)
  ROOT t = (f32[100]{0}, f32[]) tuple(n, z)
}
)"));
  EXPECT_EQ(p.output_bytes, 404 + 16);  // the arrays and the tuple's table
  EXPECT_EQ(p.alias_bytes, 400);
}

TEST(MemoryModel, WhileLoopReadsItsInputsInPlace) {
  // The loop only reads x: its state shares x's buffer (no copy); the
  // accumulator is the loop's own.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

cond {
  s = (s32[], f32[1000]{0}, f32[1000]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}

body {
  s = (s32[], f32[1000]{0}, f32[1000]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[1000]{0} get-tuple-element(s), index=1
  acc = f32[1000]{0} get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  sum = f32[1000]{0} add(acc, x)
  ROOT t = (s32[], f32[1000]{0}, f32[1000]{0}) tuple(next, x, sum)
}

ENTRY e {
  x = f32[1000]{0} parameter(0)
  z = f32[] constant(0)
  zero = f32[1000]{0} broadcast(z), dimensions={}
  i0 = s32[] constant(0)
  init = (s32[], f32[1000]{0}, f32[1000]{0}) tuple(i0, x, zero)
  w = (s32[], f32[1000]{0}, f32[1000]{0}) while(init), condition=cond, body=body
  ROOT r = f32[1000]{0} get-tuple-element(w), index=2
}
)"));
  EXPECT_EQ(p.argument_bytes, 4000);
  EXPECT_EQ(p.output_bytes, 4000);
  // No temporary as large as x: x is not copied, the accumulator is the output.
  EXPECT_LT(p.temp_bytes, 4000);
}

// Two loops of the tensor splitter's form, each summing an f64[800,800]
// (5.12 MB) over row chunks of its input, the first chunk peeled before the
// loop; `second_start` is the row where the second loop's first chunk starts.
std::string TwoPeeledLoops(const std::string& second_start) {
  std::string text = "HloModule m\n\nsum {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n"
                     "  ROOT s = f64[] add(a, b)\n}\n";
  for (const char* k : {"1", "2"}) {
    text += std::string("\nbody") + k + R"( {
  s = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f64[800,800]{1,0} get-tuple-element(s), index=1
  x = f64[4000,800]{1,0} get-tuple-element(s), index=2
  c = s32[] constant(500)
  first = s32[] multiply(i, c)
  off = s32[] add(first, c)
  z = s32[] constant(0)
  sl = f64[500,800]{1,0} dynamic-slice(x, off, z), dynamic_slice_sizes={500,800}
  zf = f64[] constant(0)
  v = f64[800]{0} reduce(sl, zf), dimensions={0}, to_apply=sum
  d = f64[800,800]{1,0} broadcast(v), dimensions={1}
  a = f64[800,800]{1,0} add(acc, d)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) tuple(next, a, x)
}

cond)" + k + R"( {
  s = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
)";
  }
  return text + R"(
ENTRY main {
  x = f64[4000,800]{1,0} parameter(0)
  y = f64[4000,800]{1,0} parameter(1)
  zero = f64[] constant(0)
  i0 = s32[] constant(0)
  sl1 = f64[500,800]{1,0} dynamic-slice(x, i0, i0), dynamic_slice_sizes={500,800}
  e1 = f64[500,800]{1,0} exponential(sl1)
  d1 = f64[800,800]{1,0} dot(e1, e1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t1 = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) tuple(i0, d1, x)
  w1 = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) while(t1), condition=cond1, body=body1
  g1 = f64[800,800]{1,0} get-tuple-element(w1), index=1
  r1 = f64[800]{0} reduce(g1, zero), dimensions={1}, to_apply=sum
)" + second_start + R"(
  sl2 = f64[500,800]{1,0} dynamic-slice(y, start2, i0), dynamic_slice_sizes={500,800}
  e2 = f64[500,800]{1,0} exponential(sl2)
  d2 = f64[800,800]{1,0} dot(e2, e2), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t2 = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) tuple(i0, d2, y)
  w2 = (s32[], f64[800,800]{1,0}, f64[4000,800]{1,0}) while(t2), condition=cond2, body=body2
  g2 = f64[800,800]{1,0} get-tuple-element(w2), index=1
  r2 = f64[800]{0} reduce(g2, zero), dimensions={1}, to_apply=sum
  ROOT out = (f64[800]{0}, f64[800]{0}) tuple(r1, r2)
}
)";
}

TEST(MemoryModel, FirstChunkThatWaitsForThePreviousLoopIsScheduledAfterIt) {
  // XLA's schedule computes the second loop's first part d2 (5.12 MB) at the
  // start when it reads only y, and keeps it live across the first loop;
  // started at minus the magnitude of an element of the first loop's result
  // (clamped to row 0) it waits for that loop. The figures are jaxlib
  // 0.7.1's CPU buffer assignment of these modules (temporaries): 13,542,552
  // and 8,480,152 bytes.
  const MemoryPrediction ready = PredictMemory(TwoPeeledLoops("  start2 = s32[] constant(0)"));
  const MemoryPrediction waits = PredictMemory(TwoPeeledLoops(R"(
  e = f64[1,1]{1,0} slice(g1), slice={[0:1], [0:1]}
  es = f64[] reshape(e)
  ei = s32[] convert(es)
  magnitude = s32[] abs(ei)
  start2 = s32[] negate(magnitude))"));
  EXPECT_EQ(ready.temp_bytes, 13542552);
  EXPECT_EQ(waits.temp_bytes, 8480152);
}

TEST(HeapPacking, PeakAndBestFit) {
  // a and c never meet: c fits in a's place; b lives throughout.
  const std::vector<BufferLife> lives = {{100, 0, 1}, {50, 0, 3}, {100, 2, 3}};
  EXPECT_EQ(exla::PeakLiveBytes(lives), 150);
  EXPECT_EQ(exla::PackedHeapBytes(lives, 1), 150);
  // Aligned to 64 bytes: largest first puts the 50-byte buffer at 128 (178),
  // longest-lived first puts it at 0 and the others at 64 (164).
  EXPECT_EQ(exla::PackedHeapBytes(lives, 64), 164);
}

TEST(Schedule, HeavierOperandFirst) {
  // Both operands of the root are dots; the one defining more bytes runs
  // first, so that its inputs die before the lighter one starts.
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  small = f32[64,1]{1,0} parameter(1)
  light = f32[64,1]{1,0} dot(x, small), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  heavy = f32[64,64]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64,1]{1,0} dot(heavy, light), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  const auto order = exla::DepthFirstSchedule(
      *module->entry(), [](const exla::HloInstruction& i) { return i.shape().ByteSize(); });
  std::vector<std::string> names;
  for (const exla::HloInstruction* i : order) names.push_back(i->name());
  const auto at = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  EXPECT_LT(at("heavy"), at("light"));
  EXPECT_EQ(names.back(), "r");
}

TEST(Schedule, BreadthFirstRunsIndependentWorkFirst) {
  // XLA CPU schedules breadth-first: the exponential of y depends only on a
  // parameter and runs before the chain on x, however long.
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  y = f32[64,64]{1,0} parameter(1)
  d1 = f32[64,64]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,64]{1,0} dot(d1, d1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ey = f32[64,64]{1,0} dot(y, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64,64]{1,0} add(d2, ey)
}
)");
  exla::ScheduleHooks hooks;
  hooks.folded = [](const exla::HloInstruction&) { return false; };
  std::vector<std::string> names;
  for (const exla::ScheduledStep& s : exla::BreadthFirstSchedule(*module->entry(), hooks)) {
    names.push_back(s.instruction->name());
  }
  const auto at = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  EXPECT_LT(at("ey"), at("d2"));
  EXPECT_EQ(names.back(), "r");
}

TEST(MemoryModel, LoopBodyHoldsALargeSliceAndItsExponential) {
  // exla's loop over rows of exp(X Y) v: the body's product s (512 KiB) and
  // its exponential are both alive (outlined), the output is updated in
  // place. XLA: temp 1048708 (s, ex, the row slice, the counter).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  state = (s32[], f32[1024,16]{1,0}, f32[1024,64]{1,0}, f32[64,1024]{1,0}, f32[1024,16]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  out = f32[1024,16]{1,0} get-tuple-element(state), index=1
  x = f32[1024,64]{1,0} get-tuple-element(state), index=2
  y = f32[64,1024]{1,0} get-tuple-element(state), index=3
  v = f32[1024,16]{1,0} get-tuple-element(state), index=4
  rows = s32[] constant(128)
  at = s32[] multiply(i, rows)
  zero = s32[] constant(0)
  xs = f32[128,64]{1,0} dynamic-slice(x, at, zero), dynamic_slice_sizes={128,64}
  s = f32[128,1024]{1,0} dot(xs, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ex = f32[128,1024]{1,0} exponential(s)
  o = f32[128,16]{1,0} dot(ex, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  out2 = f32[1024,16]{1,0} dynamic-update-slice(out, o, at, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[1024,16]{1,0}, f32[1024,64]{1,0}, f32[64,1024]{1,0}, f32[1024,16]{1,0}) tuple(next, out2, x, y, v)
}

cond {
  state = (s32[], f32[1024,16]{1,0}, f32[1024,64]{1,0}, f32[64,1024]{1,0}, f32[1024,16]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[1024,64]{1,0} parameter(0)
  y = f32[64,1024]{1,0} parameter(1)
  v = f32[1024,16]{1,0} parameter(2)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  out = f32[1024,16]{1,0} broadcast(f0), dimensions={}
  init = (s32[], f32[1024,16]{1,0}, f32[1024,64]{1,0}, f32[64,1024]{1,0}, f32[1024,16]{1,0}) tuple(zero, out, x, y, v)
  w = (s32[], f32[1024,16]{1,0}, f32[1024,64]{1,0}, f32[64,1024]{1,0}, f32[1024,16]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[1024,16]{1,0} get-tuple-element(w), index=1
}
)"));
  // The model shares the loop's pointer table with its initial tuple's and
  // its body's result's, as XLA does, and places it beside the heap, as XLA
  // does; it comes within 28 bytes of XLA's figures (XLA's heap ends with
  // a small value the model places lower) and keeps the scalar literals
  // XLA keeps.
  EXPECT_EQ(p.temp_bytes, 1048708 - 28);
  EXPECT_EQ(p.peak_bytes(), 1704084 - 28);
}

TEST(MemoryModel, AccumulatorUpdateWritesTheLoopStateNotItsOperand) {
  // A loop over the contracted dimension accumulates acc + o. The add (too
  // small to be outlined) writes the loop state, whose buffer is alive all
  // through the loop, so the product o keeps a buffer of its own.
  // XLA: temp 327748 (o, the two slices, counters).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  state = (s32[], f32[128,256]{1,0}, f32[128,1024]{1,0}, f32[1024,256]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  acc = f32[128,256]{1,0} get-tuple-element(state), index=1
  a = f32[128,1024]{1,0} get-tuple-element(state), index=2
  b = f32[1024,256]{1,0} get-tuple-element(state), index=3
  cols = s32[] constant(128)
  at = s32[] multiply(i, cols)
  zero = s32[] constant(0)
  as = f32[128,128]{1,0} dynamic-slice(a, zero, at), dynamic_slice_sizes={128,128}
  bs = f32[128,256]{1,0} dynamic-slice(b, at, zero), dynamic_slice_sizes={128,256}
  o = f32[128,256]{1,0} dot(as, bs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  acc2 = f32[128,256]{1,0} add(acc, o)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[128,256]{1,0}, f32[128,1024]{1,0}, f32[1024,256]{1,0}) tuple(next, acc2, a, b)
}

cond {
  state = (s32[], f32[128,256]{1,0}, f32[128,1024]{1,0}, f32[1024,256]{1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  a = f32[128,1024]{1,0} parameter(0)
  b = f32[1024,256]{1,0} parameter(1)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  acc = f32[128,256]{1,0} broadcast(f0), dimensions={}
  init = (s32[], f32[128,256]{1,0}, f32[128,1024]{1,0}, f32[1024,256]{1,0}) tuple(zero, acc, a, b)
  w = (s32[], f32[128,256]{1,0}, f32[128,1024]{1,0}, f32[1024,256]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[128,256]{1,0} get-tuple-element(w), index=1
}
)"));
  const int64_t o = 128 * 256 * 4, bs = 128 * 256 * 4, as = 128 * 128 * 4;
  EXPECT_GE(p.temp_bytes, o + bs + as);
  EXPECT_LE(p.temp_bytes, o + bs + as + 256);  // counters and the loop's tuple tables
}

TEST(MemoryModel, BatchedProductLoopOverKeysHoldsEveryLargeValueOfItsBody) {
  // exla's loop for o = exp(q kᵀ) v (q, k, v: f32[16,1024,64]) split over
  // the keys in slices of 32 (threshold = split size = 2.87 MB). The
  // exponential e (2 MiB) is outlined, so it does not write over s (2 MiB);
  // the product o (4 MiB) then reuses s's memory but stays alive beside e
  // and v's slice, as the outlined accumulation cannot write over it.
  // XLA: peak 23199828, temp 6422596 (before: model 19136648, 0.82x).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule bp

body {
  state = (s32[], f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(32)
  at = s32[] multiply(i, n)
  zero = s32[] constant(0)
  q = f32[16,1024,64]{2,1,0} get-tuple-element(state), index=2
  k = f32[16,1024,64]{2,1,0} get-tuple-element(state), index=3
  ks = f32[16,32,64]{2,1,0} dynamic-slice(k, zero, at, zero), dynamic_slice_sizes={16,32,64}
  v = f32[16,1024,64]{2,1,0} get-tuple-element(state), index=4
  vs = f32[16,32,64]{2,1,0} dynamic-slice(v, zero, at, zero), dynamic_slice_sizes={16,32,64}
  s = f32[16,1024,32]{2,1,0} dot(q, ks), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  e = f32[16,1024,32]{2,1,0} exponential(s)
  o = f32[16,1024,64]{2,1,0} dot(e, vs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  acc = f32[16,1024,64]{2,1,0} get-tuple-element(state), index=1
  acc2 = f32[16,1024,64]{2,1,0} add(acc, o)
  ROOT t = (s32[], f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}) tuple(next, acc2, q, k, v)
}

cond {
  state = (s32[], f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(32)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  q = f32[16,1024,64]{2,1,0} parameter(0)
  k = f32[16,1024,64]{2,1,0} parameter(1)
  v = f32[16,1024,64]{2,1,0} parameter(2)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  acc = f32[16,1024,64]{2,1,0} broadcast(f0), dimensions={}
  init = (s32[], f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}) tuple(zero, acc, q, k, v)
  w = (s32[], f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}, f32[16,1024,64]{2,1,0}) while(init), condition=cond, body=body
  ROOT r = f32[16,1024,64]{2,1,0} get-tuple-element(w), index=1
}
)"));
  const int64_t mib = 1 << 20;
  EXPECT_GE(p.temp_bytes, 2 * mib + 4 * mib + 128 * 1024);  // e, o and the slice of v
  EXPECT_LE(p.temp_bytes, 6422596 + 256);
  EXPECT_EQ(p.output_bytes, 4 * mib);
}

TEST(MemoryModel, CopiedLoopStateLivesFromItsCopy) {
  // The loop's initial counter is a literal: XLA copies it into the state
  // buffer, and the breadth-first scheduler runs that copy first, before
  // the exponential: the counter's buffer is alive from before it.
  static const char kText[] = R"(HloModule m

body {
  s = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[1024]{0} get-tuple-element(s), index=1
  w = f32[1024]{0} negate(v)
  ROOT r = (s32[], f32[1024]{0}) tuple(j, w)
}

cond {
  s = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[1024]{0} parameter(0)
  zero = s32[] constant(0)
  ex = f32[1024]{0} exponential(x)
  init = (s32[], f32[1024]{0}) tuple(zero, ex)
  w = (s32[], f32[1024]{0}) while(init), condition=cond, body=body
  ROOT r = f32[1024]{0} get-tuple-element(w), index=1
}
)";
  const auto module = exla::ParseHloModule(kText);
  const exla::ModuleBuffers buffers = exla::PredictBuffers(*module);
  int64_t exponential_step = -1;
  for (size_t step = 0; step < buffers.schedule.size(); ++step) {
    if (buffers.schedule[step] != nullptr && buffers.schedule[step]->name() == "ex") exponential_step = static_cast<int64_t>(step);
  }
  bool counter_seen = false;
  for (const exla::HeapBuffer& buffer : buffers.temporaries) {
    if (buffer.kind != exla::HeapBuffer::Kind::kValue || buffer.life.bytes != 4) continue;
    counter_seen = true;
    EXPECT_LT(buffer.life.start, exponential_step);
  }
  EXPECT_TRUE(counter_seen);
}

TEST(MemoryModel, ScalarLiteralOfALoneInstructionIsKept) {
  // add(i, 1) of a loop counter is no fusion: the literal keeps its buffer.
  // The literal in the exponential's fusion does not.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  i = s32[] parameter(0)
  x = f32[64]{0} parameter(1)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = f32[] constant(2)
  b = f32[64]{0} broadcast(two), dimensions={}
  m = f32[64]{0} multiply(x, b)
  ex = f32[64]{0} exponential(m)
  ROOT r = (s32[], f32[64]{0}) tuple(j, ex)
}
)"));
  EXPECT_EQ(p.constant_bytes, 4);
}

TEST(MemoryModel, EqualLiteralsAreKeptOnce) {
  // XLA's common subexpression elimination merges the two literals 1.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  i = s32[] parameter(0)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  one.2 = s32[] constant(1)
  k = s32[] subtract(i, one.2)
  ROOT r = (s32[], s32[]) tuple(j, k)
}
)"));
  EXPECT_EQ(p.constant_bytes, 4);
}

TEST(MemoryModel, TupleReadOnlyByElementReadsHasNoTable) {
  // XLA's simplifier reads the elements of t directly: t has no table.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[64]{0} parameter(0)
  y = f32[64]{0} parameter(1)
  t = (f32[64]{0}, f32[64]{0}) tuple(x, y)
  a = f32[64]{0} get-tuple-element(t), index=0
  b = f32[64]{0} get-tuple-element(t), index=1
  ROOT s = f32[64]{0} add(a, b)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, LoopStateReturnedThroughAnIdentityReshapeIsNotCopied) {
  // TensorFlow returns the loop-invariant weight w through a reshape to
  // its own shape, which XLA removes: w stays in the parameter's buffer,
  // no copy of its 64 KiB. Only the counter and the accumulator (written
  // in place by the broadcast) are temporaries of the state.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  s = (s32[], f32[128,128]{1,0}, f32[128]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[128,128]{1,0} get-tuple-element(s), index=1
  a = f32[128]{0} get-tuple-element(s), index=2
  d = f32[128]{0} dot(w, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w2 = f32[128,128]{1,0} reshape(w)
  ROOT r = (s32[], f32[128,128]{1,0}, f32[128]{0}) tuple(j, w2, d)
}

cond {
  s = (s32[], f32[128,128]{1,0}, f32[128]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  w = f32[128,128]{1,0} parameter(0)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  a = f32[128]{0} broadcast(f0), dimensions={}
  init = (s32[], f32[128,128]{1,0}, f32[128]{0}) tuple(zero, w, a)
  l = (s32[], f32[128,128]{1,0}, f32[128]{0}) while(init), condition=cond, body=body
  ROOT r = f32[128]{0} get-tuple-element(l), index=2
}
)"));
  EXPECT_LT(p.temp_bytes, 128 * 128 * 4);
}

// The loop both tests below run: it negates an f32[4,5] state four times.
constexpr char kNegateLoop[] = R"(HloModule m

body {
  s = (s32[], f32[4,5]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4,5]{1,0} get-tuple-element(s), index=1
  w = f32[4,5]{1,0} negate(v)
  ROOT r = (s32[], f32[4,5]{1,0}) tuple(j, w)
}

cond {
  s = (s32[], f32[4,5]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

)";

TEST(MemoryModel, ResultIsWrittenOverTheStateALoopLeaves) {
  // Once the loop has returned, its state dies at the cosine that reads
  // it: XLA writes the entry's result over it, so the 80-byte state is
  // part of the output, not a temporary (left: the counter, the loop's
  // table, the condition's flag).
  const MemoryPrediction p = PredictMemory(std::string(kNegateLoop) + R"(ENTRY e {
  x = f32[4,5]{1,0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4,5]{1,0}) tuple(zero, x)
  w = (s32[], f32[4,5]{1,0}) while(init), condition=cond, body=body
  g = f32[4,5]{1,0} get-tuple-element(w), index=1
  ROOT c = f32[4,5]{1,0} cosine(g)
}
)");
  EXPECT_LT(p.temp_bytes, 3 * 64);
  EXPECT_EQ(p.output_bytes, 80);
}

TEST(MemoryModel, IdentityReshapeKeepsALoopElementwise) {
  // TensorFlow reads the loop's state through a reshape to its own shape,
  // which XLA removes: the cosine still writes the result over the state.
  const MemoryPrediction p = PredictMemory(std::string(kNegateLoop) + R"(ENTRY e {
  x = f32[4,5]{1,0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4,5]{1,0}) tuple(zero, x)
  w = (s32[], f32[4,5]{1,0}) while(init), condition=cond, body=body
  g = f32[4,5]{1,0} get-tuple-element(w), index=1
  same = f32[4,5]{1,0} reshape(g)
  ROOT c = f32[4,5]{1,0} cosine(same)
}
)");
  EXPECT_LT(p.temp_bytes, 3 * 64);
}

TEST(MemoryModel, ResultDoesNotWriteOverAStateTheLoopPassesThrough) {
  // The loop only reads c (a running maximum over its rows); the result
  // reads c after the loop, at its last step. XLA's buffer assignment lets
  // a result take an operand's buffer only where it reads the value at its
  // last position, which for c is the loop's state: the result gets an
  // allocation of its own and c's 1 KiB stays a temporary until it is read.
  const MemoryPrediction p = PredictMemory(R"(HloModule m

body {
  s = (s32[], f32[16,16]{1,0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[16,16]{1,0} get-tuple-element(s), index=1
  zero = s32[] constant(0)
  row = f32[1,16]{1,0} dynamic-slice(v, i, zero), dynamic_slice_sizes={1,16}
  r = f32[16]{0} reshape(row)
  a = f32[16]{0} get-tuple-element(s), index=2
  m = f32[16]{0} maximum(a, r)
  ROOT t = (s32[], f32[16,16]{1,0}, f32[16]{0}) tuple(j, v, m)
}

cond {
  s = (s32[], f32[16,16]{1,0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(16)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[16,16]{1,0} parameter(0)
  c = f32[16,16]{1,0} exponential(x)
  zero = s32[] constant(0)
  ninf = f32[] constant(-inf)
  b = f32[16]{0} broadcast(ninf), dimensions={}
  init = (s32[], f32[16,16]{1,0}, f32[16]{0}) tuple(zero, c, b)
  w = (s32[], f32[16,16]{1,0}, f32[16]{0}) while(init), condition=cond, body=body
  mx = f32[16]{0} get-tuple-element(w), index=2
  mb = f32[16,16]{1,0} broadcast(mx), dimensions={1}
  ROOT d = f32[16,16]{1,0} subtract(c, mb)
}
)");
  EXPECT_GE(p.temp_bytes, 16 * 16 * 4);  // XLA: 1156
  EXPECT_EQ(p.output_bytes, 16 * 16 * 4);
}

// A loop over a 16 KiB state whose initial value is an exponential seen
// through a reshape (a bitcast once XLA has assigned layouts).
constexpr char kSquareLoop[] = R"(HloModule m

body {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[64,64]{1,0} get-tuple-element(s), index=1
  y = f32[64,64]{1,0} multiply(x, x)
  ROOT r = (s32[], f32[64,64]{1,0}) tuple(j, y)
}

cond {
  s = (s32[], f32[64,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  p = f32[64,64,1]{2,1,0} parameter(0)
  e = f32[64,64,1]{2,1,0} exponential(p)
  v = f32[64,64]{1,0} reshape(e)
  zero = s32[] constant(0)
  init = (s32[], f32[64,64]{1,0}) tuple(zero, v)
  w = (s32[], f32[64,64]{1,0}) while(init), condition=cond, body=body
  g = f32[64,64]{1,0} get-tuple-element(w), index=1
)";

TEST(MemoryModel, ValueSeenThroughAReshapeIsWrittenInPlaceAsTheLoopState) {
  // The reshape defines no buffer, so the loop is the exponential's only
  // reader: XLA's copy insertion adds no copy, the state is the
  // exponential's buffer, and the cosine writes the result over it. XLA
  // plans 129 bytes of temporaries (counter, tables, flag).
  const MemoryPrediction p = PredictMemory(std::string(kSquareLoop) + R"(  ROOT c = f32[64,64]{1,0} cosine(g)
}
)");
  EXPECT_LT(p.temp_bytes, 3 * 64);
}

TEST(MemoryModel, ValueReadAgainThroughAnotherReshapeIsCopiedIntoTheLoop) {
  // Read again after the loop, the exponential must outlive it: XLA copies
  // it into the state (16,513 bytes of temporaries).
  const MemoryPrediction p = PredictMemory(std::string(kSquareLoop) + R"(  c = f32[64,64]{1,0} cosine(g)
  ev = f32[64,64]{1,0} reshape(e)
  ROOT o = f32[64,64]{1,0} add(c, ev)
}
)");
  EXPECT_GE(p.temp_bytes, 64 * 64 * 4);
  EXPECT_LT(p.temp_bytes, 64 * 64 * 4 + 3 * 64);
}

// The loop both tests below run: its state nests a tensor list (a tuple of
// the list and its length), as TensorFlow's loops do.
constexpr char kListLoop[] = R"(HloModule m

body {
  s = (s32[], (f32[64,64]{1,0}, s32[])) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  l = (f32[64,64]{1,0}, s32[]) get-tuple-element(s), index=1
  a = f32[64,64]{1,0} get-tuple-element(l), index=0
  n = s32[] get-tuple-element(l), index=1
  row = f32[1,64]{1,0} broadcast(one), dimensions={}
  zero = s32[] constant(0)
  u = f32[64,64]{1,0} dynamic-update-slice(a, row, i, zero)
  l2 = (f32[64,64]{1,0}, s32[]) tuple(u, n)
  ROOT r = (s32[], (f32[64,64]{1,0}, s32[])) tuple(j, l2)
}

cond {
  s = (s32[], (f32[64,64]{1,0}, s32[])) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}

)";

TEST(MemoryModel, NestedInitialValueIsWrittenInPlace) {
  // The zeros that start the list are read by the loop alone, so XLA
  // writes them in place: one 16 KiB buffer for the list, not a second one
  // for a copy.
  const MemoryPrediction p = PredictMemory(std::string(kListLoop) + R"(ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  z = f32[64,64]{1,0} broadcast(f0), dimensions={}
  len = s32[] constant(64)
  list = (f32[64,64]{1,0}, s32[]) tuple(z, len)
  init = (s32[], (f32[64,64]{1,0}, s32[])) tuple(zero, list)
  w = (s32[], (f32[64,64]{1,0}, s32[])) while(init), condition=cond, body=body
  l = (f32[64,64]{1,0}, s32[]) get-tuple-element(w), index=1
  a = f32[64,64]{1,0} get-tuple-element(l), index=0
  ROOT d = f32[64,64]{1,0} dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_LT(p.temp_bytes, 2 * 64 * 64 * 4);
}

TEST(MemoryModel, RebuiltInitialValueIsWrittenInPlace) {
  // As above, but the list is rebuilt from the parts of another tuple, as
  // TensorFlow does: XLA's simplifier reads the parts directly, so the
  // zeros are still written into the loop in place.
  const MemoryPrediction p = PredictMemory(std::string(kListLoop) + R"(ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  z = f32[64,64]{1,0} broadcast(f0), dimensions={}
  len = s32[] constant(64)
  made = (f32[64,64]{1,0}, s32[]) tuple(z, len)
  part = f32[64,64]{1,0} get-tuple-element(made), index=0
  count = s32[] get-tuple-element(made), index=1
  list = (f32[64,64]{1,0}, s32[]) tuple(part, count)
  init = (s32[], (f32[64,64]{1,0}, s32[])) tuple(zero, list)
  w = (s32[], (f32[64,64]{1,0}, s32[])) while(init), condition=cond, body=body
  l = (f32[64,64]{1,0}, s32[]) get-tuple-element(w), index=1
  a = f32[64,64]{1,0} get-tuple-element(l), index=0
  ROOT d = f32[64,64]{1,0} dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_LT(p.temp_bytes, 2 * 64 * 64 * 4);
}

TEST(MemoryModel, ConditionalUpdatingItsOperandCopiesIt) {
  // The loop's state x is both the conditional's operand and, updated, its
  // result: XLA copies x before the conditional writes over it, 4 KiB more
  // than the model would otherwise hold.
  const std::string text = R"(HloModule m

neg {
  p = (f32[1024]{0}) parameter(0)
  x = f32[1024]{0} get-tuple-element(p), index=0
  ROOT n = f32[1024]{0} negate(x)
}

ex {
  p = (f32[1024]{0}) parameter(0)
  x = f32[1024]{0} get-tuple-element(p), index=0
  ROOT e = f32[1024]{0} exponential(x)
}

body {
  s = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[1024]{0} get-tuple-element(s), index=1
  t = (f32[1024]{0}) tuple(x)
  y = f32[1024]{0} conditional(i, t, t), branch_computations={neg, ex}
  ROOT r = (s32[], f32[1024]{0}) tuple(j, y)
}

cond {
  s = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[1024]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024]{0}) tuple(zero, x)
  w = (s32[], f32[1024]{0}) while(init), condition=cond, body=body
  ROOT r = f32[1024]{0} get-tuple-element(w), index=1
}
)";
  const MemoryPrediction p = PredictMemory(text);
  EXPECT_GE(p.temp_bytes, 4096);
}

TEST(MemoryModel, SolvesSharingASignatureKeepCopiesOfALiteralRightHandSide) {
  // Both solves have one signature: XLA expands them into calls of one
  // computation, cloned per caller, and the literal identity they solve
  // against moves into each clone: three copies of its 256 bytes. A lone
  // solve's expansion is inlined and keeps none.
  const std::string text = R"(HloModule m

ENTRY e {
  a = f32[8,8]{1,0} parameter(0)
  a2 = f32[8,8]{1,0} parameter(1)
  b = f32[8,8]{1,0} constant({ { 1, 0, 0, 0, 0, 0, 0, 0 }, { 0, 1, 0, 0, 0, 0, 0, 0 }, { 0, 0, 1, 0, 0, 0, 0, 0 }, { 0, 0, 0, 1, 0, 0, 0, 0 }, { 0, 0, 0, 0, 1, 0, 0, 0 }, { 0, 0, 0, 0, 0, 1, 0, 0 }, { 0, 0, 0, 0, 0, 0, 1, 0 }, { 0, 0, 0, 0, 0, 0, 0, 1 } })
  tsa = f32[8,8]{1,0} triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  tsb = f32[8,8]{1,0} triangular-solve(a2, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT t = (f32[8,8]{1,0}, f32[8,8]{1,0}) tuple(tsa, tsb)
})";
  EXPECT_EQ(PredictMemory(text).constant_bytes, 3 * 8 * 8 * 4);
  std::string lone = text;
  lone.replace(lone.find("tsb = f32[8,8]{1,0} triangular-solve(a2, b)"),
               std::string("tsb = f32[8,8]{1,0} triangular-solve(a2, b)").size(), "tsb = f32[8,8]{1,0} add(a2, b)");
  EXPECT_EQ(PredictMemory(lone).constant_bytes, 8 * 8 * 4);
}

TEST(MemoryModel, LiteralsTheLoopsOnlyReadAreSunkIntoEachBody) {
  // Both loops read the literal c through their state and return it
  // unchanged: XLA's constant sinking gives each body a copy of c and
  // drops it from the states, and the entry's c, then read by nothing,
  // goes. Two copies of its 64 bytes, beside five 4-byte scalars (as XLA:
  // 148 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  p = (s32[], f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16]{0} get-tuple-element(p), index=1
  w = f32[16]{0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  e = f32[16]{0} multiply(v, w)
  ROOT t = (s32[], f32[16]{0}, f32[16]{0}) tuple(i2, e, w)
}

cond {
  p = (s32[], f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body2 {
  p = (s32[], f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16]{0} get-tuple-element(p), index=1
  w = f32[16]{0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  e = f32[16]{0} multiply(v, w)
  ROOT t = (s32[], f32[16]{0}, f32[16]{0}) tuple(i2, e, w)
}

cond2 {
  p = (s32[], f32[16]{0}, f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[16]{0} parameter(0)
  zero = s32[] constant(0)
  c = f32[16]{0} constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
  t0 = (s32[], f32[16]{0}, f32[16]{0}) tuple(zero, x, c)
  w = (s32[], f32[16]{0}, f32[16]{0}) while(t0), condition=cond, body=body
  a = f32[16]{0} get-tuple-element(w), index=1
  t1 = (s32[], f32[16]{0}, f32[16]{0}) tuple(zero, a, c)
  w1 = (s32[], f32[16]{0}, f32[16]{0}) while(t1), condition=cond2, body=body2
  ROOT r = f32[16]{0} get-tuple-element(w1), index=1
})"));
  EXPECT_EQ(p.constant_bytes, 2 * 64 + 5 * 4);
}

TEST(MemoryModel, TupleTablesAreAllocationsOfTheirOwn) {
  // Two loops run one after the other; each has a pointer table of 16
  // bytes. Their lives do not overlap, yet XLA's CPU buffer assignment
  // gives each table an allocation of its own beside the heap (it packs
  // only arrays into the heap) and stacks them at 64-byte boundaries: the
  // heap of three slots and a byte (the first loop's state, two counters,
  // a condition), then 64 + 16 bytes of tables. Packed into the heap with
  // the rest, the two tables would share one slot. (The first loop's
  // state, dead before the second loop's state is written, takes the
  // allocation of that state, the entry's result: result_lending.h. So
  // three slots of the heap are left.)
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body0 {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  e = f32[16]{0} exponential(v)
  ROOT t = (s32[], f32[16]{0}) tuple(n, e)
}

cond0 {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(4)
  ROOT lt = pred[] compare(i, c), direction=LT
}

body1 {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  e = f32[16]{0} sine(v)
  ROOT t = (s32[], f32[16]{0}) tuple(n, e)
}

cond1 {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(4)
  ROOT lt = pred[] compare(i, c), direction=LT
}

ENTRY e {
  x = f32[16]{0} parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[16]{0}) tuple(z, x)
  w0 = (s32[], f32[16]{0}) while(t0), condition=cond0, body=body0
  a = f32[16]{0} get-tuple-element(w0), index=1
  t1 = (s32[], f32[16]{0}) tuple(z, a)
  w1 = (s32[], f32[16]{0}) while(t1), condition=cond1, body=body1
  ROOT r = f32[16]{0} get-tuple-element(w1), index=1
})"));
  EXPECT_EQ(p.temp_bytes, 3 * 64 + 64 + 16);
}

TEST(MemoryModel, LoopElementsSwappedByTheBodyAreCopied) {
  // The body hands each array back in the other's place: the state's two
  // elements keep buffers of their own (one is the initial exponential,
  // written in place, the other the result's), and XLA's copy insertion
  // copies both when the body ends. With the counter's slot and the
  // state's table: 256 + 2 * 256 + 64 + 24 bytes. (XLA: 836.)
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  p = (s32[], f32[64]{0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[64]{0} get-tuple-element(p), index=1
  b = f32[64]{0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[64]{0}, f32[64]{0}) tuple(n, b, a)
}

cond {
  p = (s32[], f32[64]{0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(5)
  ROOT lt = pred[] compare(i, c), direction=LT
}

ENTRY e {
  x = f32[64]{0} parameter(0)
  y = f32[64]{0} parameter(1)
  z = s32[] constant(0)
  ex = f32[64]{0} exponential(x)
  ey = f32[64]{0} exponential(y)
  t0 = (s32[], f32[64]{0}, f32[64]{0}) tuple(z, ex, ey)
  w = (s32[], f32[64]{0}, f32[64]{0}) while(t0), condition=cond, body=body
  a = f32[64]{0} get-tuple-element(w), index=1
  b = f32[64]{0} get-tuple-element(w), index=2
  ROOT r = f32[64]{0} subtract(a, b)
})"));
  EXPECT_EQ(p.temp_bytes, 256 + 2 * 256 + 64 + 24);
}

TEST(HeapPacking, KeepsTheSmallerOfSpatialAndTemporal) {
  // Largest first leaves a gap no later buffer fits (a heap of 576);
  // longest-lived first packs into 512. XLA keeps the smaller.
  const std::vector<BufferLife> lives = {{128, 0, 5}, {128, 3, 5}, {192, 4, 5}, {128, 3, 3}, {128, 2, 3}};
  EXPECT_EQ(exla::PackedHeapBytes(lives, 64), 512);
}

TEST(HeapPacking, LongestLivedFirstComparesLivesExactly) {
  // Longest-lived first: c (steps 1-3) at 0, then the two that live two
  // steps, larger first: a (0-1, meets c) at 128, b (3-4, meets c, not a)
  // at 128 as well; d (step 3, meets c and b) on top at 256: a heap of 448.
  // Largest first needs 512. Lives compared one step off (or ties broken
  // otherwise) pack into 512 too.
  const std::vector<BufferLife> lives = {{256, 0, 1}, {128, 3, 4}, {192, 3, 3}, {128, 1, 3}};
  EXPECT_EQ(exla::PackedHeapBytes(lives, 64), 448);
}

TEST(MemoryModel, TemporaryDeadBeforeTheResultIsWrittenTakesItsAllocation) {
  // d1 and d2 are alive together at s, which XLA writes over one of them;
  // the other dies there, before the result r is written, and XLA's buffer
  // assignment places it in r's allocation: one temporary is left in the
  // heap (XLA: 65536 bytes of temporaries).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[128,128]{1,0} parameter(0)
  y = f32[128,128]{1,0} parameter(1)
  d1 = f32[128,128]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[128,128]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[128,128]{1,0} add(d1, d2)
  ROOT r = f32[128,128]{1,0} dot(s, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 65536);
  EXPECT_EQ(p.peak_bytes(), 4 * 65536);
}

TEST(MemoryModel, LoopDoesNotWriteOverWhatItReadsThroughAReshape) {
  // The add reads d through a reshape, a bitcast XLA fuses into its loop,
  // which is then not elementwise in d: the loop's result takes a buffer
  // of its own beside d (XLA: 4096 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[16,32]{1,0} parameter(0)
  w = f32[32,32]{1,0} parameter(1)
  b = f32[2,8,32]{2,1,0} parameter(2)
  v = f32[32,8]{1,0} parameter(3)
  d = f32[16,32]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[2,8,32]{2,1,0} reshape(d)
  a = f32[2,8,32]{2,1,0} add(r, b)
  m = f32[2,8,32]{2,1,0} maximum(a, b)
  s = f32[16,32]{1,0} reshape(m)
  ROOT o = f32[16,8]{1,0} dot(s, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 2 * 2048);
}

TEST(MemoryModel, TopKOtherThanF32SortsItsOperandInPlace) {
  // The sort XLA makes of an f64 top-k sorts the negation in place (nothing
  // else reads it) with an s32 iota of indices: 3200 + 1600 bytes and the
  // sort's table (XLA: 4816 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f64[4,100]{1,0} parameter(0)
  n = f64[4,100]{1,0} negate(x)
  t = (f64[4,5]{1,0}, s32[4,5]{1,0}) topk(n), k=5, largest=true
  v = f64[4,5]{1,0} get-tuple-element(t), index=0
  i = s32[4,5]{1,0} get-tuple-element(t), index=1
  ROOT r = (f64[4,5]{1,0}, s32[4,5]{1,0}) tuple(v, i)
}
)"));
  EXPECT_EQ(p.temp_bytes, 4816);
}

TEST(MemoryModel, LoopBodyCopiesAnElementItReadsAfterUpdatingIt) {
  // The body writes t into element 1's buffer, then u reads the old value
  // s: XLA's copy insertion copies s at the start of the body (copy.4 in
  // its buffer assignment), alive until u.
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

body {
  p = (s32[], f32[64]{0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = f32[64]{0} get-tuple-element(p), index=1
  c = f32[64]{0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  n = s32[] add(i, one)
  e = f32[64]{0} exponential(c)
  t = f32[64]{0} add(s, e)
  u = f32[64]{0} subtract(t, s)
  ROOT r = (s32[], f32[64]{0}, f32[64]{0}) tuple(n, t, u)
}

cond {
  p = (s32[], f32[64]{0}, f32[64]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(4)
  ROOT lt = pred[] compare(i, k), direction=LT
}

ENTRY e {
  x = f32[64]{0} parameter(0)
  y = f32[64]{0} parameter(1)
  z = s32[] constant(0)
  t0 = (s32[], f32[64]{0}, f32[64]{0}) tuple(z, x, y)
  w = (s32[], f32[64]{0}, f32[64]{0}) while(t0), condition=cond, body=body
  a = f32[64]{0} get-tuple-element(w), index=1
  b = f32[64]{0} get-tuple-element(w), index=2
  ROOT o = f32[64]{0} add(a, b)
})");
  const exla::ModuleBuffers buffers = exla::PredictBuffers(*module);
  int copies = 0;
  for (const exla::HeapBuffer& buffer : buffers.temporaries) {
    const bool copy = buffer.kind == exla::HeapBuffer::Kind::kScratch && buffer.life.bytes == 256;
    if (copy && buffer.writers.size() == 1 && buffer.writers[0]->name() == "t") ++copies;
  }
  EXPECT_EQ(copies, 1);
}

TEST(MemoryModel, ValueNobodyReadsDiesWhereItIsWritten) {
  // The arg-min r writes its values (f64, 512 KiB) and indices (s32, 256 KiB)
  // at one step; nothing reads the values, so their buffer is free from the
  // next step on, where q is written (w is ready after r's operands, so q
  // runs right after r, before r's indices are read). Alive at once: r's
  // two arrays and its tuple table, then the indices and q, the indices, q
  // and c, then c, q and t (XLA: 786448 bytes of temporaries). Were the
  // values alive one step longer, q could not take their memory.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

argmin {
  av = f64[] parameter(0)
  ai = s32[] parameter(1)
  bv = f64[] parameter(2)
  bi = s32[] parameter(3)
  lt = pred[] compare(av, bv), direction=LT
  v = f64[] select(lt, av, bv)
  i = s32[] select(lt, ai, bi)
  ROOT r = (f64[], s32[]) tuple(v, i)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f64[65536,2]{1,0} parameter(0)
  iota = s32[65536,2]{1,0} iota(), iota_dimension=1
  big = f64[] constant(1e300)
  zero = s32[] constant(0)
  w = f32[256,256]{1,0} parameter(1)
  r = (f64[65536]{0}, s32[65536]{0}) reduce(x, iota, big, zero), dimensions={1}, to_apply=argmin
  q = f32[256,256]{1,0} dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[65536]{0} get-tuple-element(r), index=1
  c = f32[65536]{0} convert(i)
  c2 = f32[256,256]{1,0} reshape(c)
  t = f32[256,256]{1,0} dot(c2, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  fz = f32[] constant(0)
  ROOT s = f32[] reduce(t, fz), dimensions={0,1}, to_apply=add
}
)"));
  EXPECT_EQ(p.temp_bytes, 3 * 262144 + 16);
  EXPECT_EQ(p.live_bytes, 3 * 262144 + 16);
}

TEST(MemoryModel, LoopStartsInPlaceFromABroadcastItsOtherReadersComputeAgain) {
  // The loop's 64 KiB state starts from a broadcast of zero that the select
  // after the loop reads too. XLA's fusion gives the select its own copy of
  // the broadcast (reader_duplication.h), so the loop's tuple is the
  // broadcast's only reader and the loop writes over it: no copy of it, no
  // second 64 KiB. XLA (jaxlib 0.7.1) plans 135,336 bytes, 152 of them
  // temporaries (counters and tables).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT w = f32[] add(u, v)
}

body {
  p = (s32[], f32[128,128]{1,0}, f32[128,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  zero = s32[] constant(0)
  x = f32[128,8]{1,0} get-tuple-element(p), index=2
  row = f32[1,8]{1,0} dynamic-slice(x, i, zero), dynamic_slice_sizes={1,8}
  r3 = f32[1,128,8]{2,1,0} broadcast(row), dimensions={0,2}
  x3 = f32[1,128,8]{2,1,0} broadcast(x), dimensions={1,2}
  d = f32[1,128,8]{2,1,0} subtract(r3, x3)
  sq = f32[1,128,8]{2,1,0} multiply(d, d)
  fz = f32[] constant(0)
  s = f32[1,128]{1,0} reduce(sq, fz), dimensions={2}, to_apply=add
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[128,128]{1,0} get-tuple-element(p), index=1
  u = f32[128,128]{1,0} dynamic-update-slice(acc, s, i, zero)
  ROOT t = (s32[], f32[128,128]{1,0}, f32[128,8]{1,0}) tuple(i1, u, x)
}

cond {
  p = (s32[], f32[128,128]{1,0}, f32[128,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(128)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[128,8]{1,0} parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  b = f32[128,128]{1,0} broadcast(fz), dimensions={}
  t = (s32[], f32[128,128]{1,0}, f32[128,8]{1,0}) tuple(zero, b, x)
  w = (s32[], f32[128,128]{1,0}, f32[128,8]{1,0}) while(t), condition=cond, body=body
  g = f32[128,128]{1,0} get-tuple-element(w), index=1
  y = f32[128,128]{1,0} parameter(1)
  c = pred[128,128]{1,0} compare(g, y), direction=GT
  s = f32[128,128]{1,0} select(c, g, b)
  ROOT ex = f32[128,128]{1,0} exponential(s)
}
)"));
  EXPECT_EQ(p.temp_bytes, 152);
  EXPECT_EQ(p.peak_bytes(), 135336);
}

TEST(MemoryModel, OuterProductReadByATreeReductionIsRecomputedByItsOtherReaders) {
  // XLA writes the outer product out once for the row maximum's
  // reduce-window and computes it again inside the loop of the compare and
  // the row sum, from the two vectors: one 256 x 256 buffer is alive at a
  // time. XLA plans 273,416 bytes (arguments, result, temporaries).
  const MemoryPrediction p = PredictMemory(R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

ENTRY e {
  x = f32[256,1]{1,0} parameter(0)
  y = f32[256,1]{1,0} parameter(1)
  o = f32[256,256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ninf = f32[] constant(-inf)
  mx = f32[256]{0} reduce(o, ninf), dimensions={1}, to_apply=max
  b = f32[256,256]{1,0} broadcast(mx), dimensions={0}
  eq = pred[256,256]{1,0} compare(o, b), direction=EQ
  c = f32[256,256]{1,0} convert(eq)
  zero = f32[] constant(0)
  ROOT s = f32[256]{0} reduce(c, zero), dimensions={1}, to_apply=add
}
)");
  EXPECT_LT(p.temp_bytes, 256 * 256 * 4 + 256 * 64);
}


// A fused loop reading x (the sum of squared differences s, with the
// literal 0 of its reduce) and a dot of two other parameters (g) are ready
// together; the concatenation c of s and half of s follows s, and the
// large loop `big` follows g. `x_source` is what the loop of s reads x
// through.
std::string LoopsReadyAfterParameters(const std::string& x_source) {
  return R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[128,4]{1,0} parameter(0)
  a = f32[128,2]{1,0} parameter(1)
  b = f32[256,2]{1,0} parameter(2)
)" + x_source + R"(
  by = f32[128,128,4]{2,1,0} broadcast(x), dimensions={1,2}
  d = f32[128,128,4]{2,1,0} subtract(bx, by)
  m = f32[128,128,4]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  s = f32[128,128]{1,0} reduce(m, zero), dimensions={2}, to_apply=add
  half = f32[] constant(0.5)
  hb = f32[128,128]{1,0} broadcast(half), dimensions={}
  h = f32[128,128]{1,0} multiply(s, hb)
  c = f32[256,128]{1,0} concatenate(s, h), dimensions={0}
  o1 = f32[256,2]{1,0} dot(c, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[128,256]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  gs = f32[128,128]{1,0} slice(g), slice={[0:128], [0:128]}
  gb = f32[128,128,4]{2,1,0} broadcast(gs), dimensions={0,1}
  big = f32[128,128,4]{2,1,0} multiply(d, gb)
  o2 = f32[128,4]{1,0} reduce(big, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[256,2]{1,0}, f32[128,4]{1,0}) tuple(o1, o2)
}
)";
}

TEST(MemoryModel, FusedLoopDoesNotWaitForItsScalarLiterals) {
  // XLA fuses the literal 0 into the loop of s (CpuInstructionFusion fuses
  // scalar constants into fusions): s reads only x, is ready before g, and
  // c runs before big. c (128 KiB) and g (128 KiB) are alive while big
  // (256 KiB) is written: XLA plans 524,288 bytes of temporaries. Waiting
  // for the literal, s would run after g, big before c, and only s
  // (64 KiB) would be alive beside big and g.
  const MemoryPrediction p = PredictMemory(LoopsReadyAfterParameters(
      "  bx = f32[128,128,4]{2,1,0} broadcast(x), dimensions={0,2}"));
  EXPECT_EQ(p.temp_bytes, 524288);
}

TEST(MemoryModel, LoopReadingAReshapeOfAReshapeReadsTheParameter) {
  // x reshaped to [128,1,4] and back: XLA's simplifier removes both
  // reshapes (simplify/reshape_of_reshape.h), so the loop of s reads x and
  // is scheduled as in FusedLoopDoesNotWaitForItsScalarLiterals (XLA plans
  // the same 524,288 bytes). Kept, the reshapes would be steps before s.
  const MemoryPrediction p = PredictMemory(LoopsReadyAfterParameters(
      "  r1 = f32[128,1,4]{2,1,0} reshape(x)\n"
      "  r2 = f32[128,4]{1,0} reshape(r1)\n"
      "  bx = f32[128,128,4]{2,1,0} broadcast(r2), dimensions={0,2}"));
  EXPECT_EQ(p.temp_bytes, 524288);
}

TEST(MemoryModel, ParametersAreReadyBeforeLiterals) {
  // XLA numbers the parameters before the literals (the module comes
  // through StableHLO), and its breadth-first schedule starts from the
  // instructions in that order: the dot g of the last two parameters runs
  // before the lone reduces ra and rb, which wait for the literal 0, and
  // g's tree reduction frees it before `big` (32 KiB each) is written.
  // XLA plans 33,280 bytes of temporaries; in the order of the text, ra
  // and rb would run first and g and big would be alive together.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  w = f32[128,4]{1,0} parameter(3)
  a = f32[64,8]{1,0} parameter(0)
  zero = f32[] constant(0)
  ra = f32[64]{0} reduce(a, zero), dimensions={1}, to_apply=add
  bra = f32[64,128]{1,0} broadcast(ra), dimensions={0}
  b = f32[128,8]{1,0} parameter(1)
  rb = f32[128]{0} reduce(b, zero), dimensions={1}, to_apply=add
  brb = f32[64,128]{1,0} broadcast(rb), dimensions={1}
  big = f32[64,128]{1,0} add(bra, brb)
  o = f32[64,4]{1,0} dot(big, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[64,4]{1,0} parameter(2)
  g = f32[64,128]{1,0} dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  rg = f32[64]{0} reduce(g, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[64,4]{1,0}, f32[64]{0}) tuple(o, rg)
}
)"));
  EXPECT_GE(p.temp_bytes, 33280);
  EXPECT_LT(p.temp_bytes, 2 * 32768);
}

TEST(MemoryModel, LoopsReadingATreeReductionWaitForItsFinalReduce) {
  // The maximum mx of d is a tree reduction (tree_reduction.h) that two
  // loops read (e1, e2): its final reduce is an instruction of its own in
  // XLA, one step after the reduce-window, so e1 and e2 run after the tree
  // of q (ready with the reduce-window of d) has freed q. Two 128 KiB
  // values are alive at a time: XLA plans 270,336 bytes of temporaries.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] maximum(p, q)
}

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  a = f32[128,2]{1,0} parameter(0)
  b = f32[256,2]{1,0} parameter(1)
  k = f32[] parameter(2)
  d = f32[128,256]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[256]{0} reduce(d, ninf), dimensions={0}, to_apply=max
  bm = f32[128,256]{1,0} broadcast(mx), dimensions={1}
  e1 = f32[128,256]{1,0} multiply(d, bm)
  e2 = f32[128,256]{1,0} subtract(d, bm)
  bk = f32[128,256]{1,0} broadcast(k), dimensions={}
  q = f32[128,256]{1,0} multiply(d, bk)
  rq = f32[256]{0} reduce(q, zero), dimensions={0}, to_apply=add
  r1 = f32[256]{0} reduce(e1, zero), dimensions={0}, to_apply=add
  r2 = f32[256]{0} reduce(e2, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[256]{0}, f32[256]{0}, f32[256]{0}) tuple(rq, r1, r2)
}
)"));
  EXPECT_GE(p.temp_bytes, 2 * 131072);
  EXPECT_LE(p.temp_bytes, 270336);
}

}  // namespace
