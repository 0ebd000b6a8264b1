// The memory model (PredictMemory, model/xla_cpu_model.h): which values get a buffer,
// how long they live on XLA's schedule and how they pack into one heap.
// Each module is small enough to count its bytes by hand; the corpus test
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

TEST(MemoryModel, ElementwiseChainWritesOnlyItsResult) {
  // Fusion folds negate and add into the exponential's loop: no temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[256]{0} parameter(0)
  n = f32[256]{0} negate(x)
  a = f32[256]{0} add(n, x)
  ROOT r = f32[256]{0} exponential(a)
}
)"));
  EXPECT_EQ(p.argument_bytes, 1024);
  EXPECT_EQ(p.output_bytes, 1024);
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 2048);
}

TEST(MemoryModel, DotOperandIsWrittenOut) {
  // A GEMM reads buffers: the exponential feeding it is a temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  y = f32[32,16]{1,0} parameter(1)
  ex = f32[64,32]{1,0} exponential(x)
  ROOT d = f32[64,16]{1,0} dot(ex, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 64 * 32 * 4);
  EXPECT_EQ(p.buffers, 1);
}

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

// Row sums of x[:, None] - x[None, :] for x of @ elements.
constexpr char kRowSums[] = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[@]{0} parameter(0)
  bx = f32[@,@]{1,0} broadcast(x), dimensions={0}
  by = f32[@,@]{1,0} broadcast(x), dimensions={1}
  d = f32[@,@]{1,0} subtract(bx, by)
  z = f32[] constant(0)
  ROOT r = f32[@]{0} reduce(d, z), dimensions={1}, to_apply=add
}
)";

std::string RowSums(int n) {
  std::string text = kRowSums;
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) {
    text.replace(at, 1, std::to_string(n));
  }
  return text;
}

TEST(MemoryModel, ShortReductionFusesItsInput) {
  // 20 terms per sum: the 20 x 20 matrix exists only inside the reduction's
  // loop (XLA plans 80 + 80 bytes).
  const MemoryPrediction p = PredictMemory(RowSums(20));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 160);
}

TEST(MemoryModel, LongReductionReadsItsInputFromMemory) {
  // 1000 terms per sum: XLA CPU sums as a tree (a reduce-window over
  // windows of 32, then a reduce), which reads the whole 1000 x 1000 matrix
  // from memory beside 32 partial sums per row: XLA plans 4,128,000 bytes
  // of temporaries.
  const MemoryPrediction p = PredictMemory(RowSums(1000));
  EXPECT_EQ(p.temp_bytes, 4000000 + 32 * 1000 * 4);
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

TEST(MemoryModel, OuterProductFusesIntoItsReader) {
  // A dot contracting one dimension of size 1 is a multiply of broadcasts:
  // fused into the negate that reads it, no temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[128,1]{1,0} parameter(0)
  y = f32[1,64]{1,0} parameter(1)
  d = f32[128,64]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[128,64]{1,0} negate(d)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, SwappedConvolutionKernelIsReversedEarly) {
  // A 3x3 kernel over a 1x1 image: XLA swaps the operands and writes the
  // reversed kernel to memory (64 KiB) as soon as the kernel exists; the
  // breadth-first schedule runs that before the exponential, so both are
  // alive together.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[1,1,1,32]{3,2,1,0} parameter(0)
  k = f32[3,3,32,64]{3,2,1,0} parameter(1)
  big = f32[1,1,1,32]{3,2,1,0} exponential(x)
  c = f32[1,1,1,64]{3,2,1,0} convolution(big, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT r = f32[1,1,1,64]{3,2,1,0} negate(c)
}
)"));
  EXPECT_GE(p.temp_bytes, 3 * 3 * 32 * 64 * 4);
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

// --- XLA's parallel task assignment and exla's loops ----------------------
// XLA CPU outlines a loop that reads and writes 512 KiB or more into a call
// of its own (to run it on several threads); the call holds its operands
// while the loop writes, so the loop cannot write over one of them.

// d (dot) -> ex -> dot, between two matrix products.
std::string DotExpDot(int rows) {
  const std::string n = std::to_string(rows);
  return "HloModule m\n\nENTRY e {\n"
         "  x = f32[" + n + ",64]{1,0} parameter(0)\n"
         "  y = f32[64,256]{1,0} parameter(1)\n"
         "  z = f32[256,16]{1,0} parameter(2)\n"
         "  d = f32[" + n + ",256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  ex = f32[" + n + ",256]{1,0} exponential(d)\n"
         "  ROOT r = f32[" + n + ",16]{1,0} dot(ex, z), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

TEST(MemoryModel, SmallElementwiseLoopWritesOverItsOperand) {
  // 128 KiB read and 128 KiB written: one thread, no call; the exponential
  // writes over d, which dies there. XLA (jaxlib 0.7.1): temp 131072.
  const MemoryPrediction p = PredictMemory(DotExpDot(128));
  EXPECT_EQ(p.temp_bytes, 128 * 256 * 4);
}

TEST(MemoryModel, ElementwiseLoopOutlinedForThreadsKeepsItsOperand) {
  // 256 KiB read and 256 KiB written: two threads, so XLA outlines the
  // exponential, and d and ex are both alive. XLA: temp 524288.
  const MemoryPrediction p = PredictMemory(DotExpDot(256));
  EXPECT_EQ(p.temp_bytes, 2 * 256 * 256 * 4);
}

TEST(MemoryModel, OutlinedResultStillTakesItsOperandsBuffer) {
  // The outlined exponential is the entry's result: XLA assigns the result
  // buffer first and d, which dies at the exponential, shares it. XLA: temp 0.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[512,64]{1,0} parameter(0)
  y = f32[64,256]{1,0} parameter(1)
  d = f32[512,256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT ex = f32[512,256]{1,0} exponential(d)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.output_bytes, 512 * 256 * 4);
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

TEST(MemoryModel, CallsAreInlinedBeforeScheduling) {
  // XLA inlines both calls: the exponential of each is one loop that reads
  // x and y directly, so the two 1 KiB values die where the add reads them
  // and the sum is written into the result. As written (two calls, each
  // returning a buffer) both results would be temporaries.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

f {
  a = f32[256]{0} parameter(0)
  ROOT e = f32[256]{0} exponential(a)
}

ENTRY e {
  x = f32[256]{0} parameter(0)
  y = f32[256]{0} parameter(1)
  c1 = f32[256]{0} call(x), to_apply=f
  c2 = f32[256]{0} call(y), to_apply=f
  ROOT s = f32[256]{0} add(c1, c2)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 3 * 1024);
}

TEST(MemoryModel, CheapConditionalOnABooleanBecomesASelect) {
  // Both branches are elementwise: XLA computes both and selects, one loop
  // that writes the result; no branch result, no pointer tables.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

on_true {
  t = (f32[64]{0}) parameter(0)
  a = f32[64]{0} get-tuple-element(t), index=0
  s = f32[64]{0} sine(a)
  ROOT r = (f32[64]{0}) tuple(s)
}

on_false {
  t = (f32[64]{0}) parameter(0)
  a = f32[64]{0} get-tuple-element(t), index=0
  c = f32[64]{0} cosine(a)
  ROOT r = (f32[64]{0}) tuple(c)
}

ENTRY e {
  x = f32[64]{0} parameter(0)
  p = pred[] parameter(1)
  t = (f32[64]{0}) tuple(x)
  c = (f32[64]{0}) conditional(p, t, t), true_computation=on_true, false_computation=on_false
  ROOT g = f32[64]{0} get-tuple-element(c), index=0
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
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

TEST(MemoryModel, LoopDoesNotWriteOverAnF64Convolution) {
  // Eigen runs only f32 and f16 convolutions; XLA emits an f64 one as a
  // loop nest that its parallel task assigner outlines into a call, whose
  // result the relu's loop does not write over (the second convolution
  // reads the relu from memory).
  const std::string text = R"(HloModule m

ENTRY e {
  x = TYPE[2,12,12,3]{3,2,1,0} parameter(0)
  k = TYPE[3,3,3,8]{3,2,1,0} parameter(1)
  c = TYPE[2,12,12,8]{3,2,1,0} convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = TYPE[] constant(0)
  b = TYPE[2,12,12,8]{3,2,1,0} broadcast(z), dimensions={}
  r = TYPE[2,12,12,8]{3,2,1,0} maximum(c, b)
  k2 = TYPE[3,3,8,4]{3,2,1,0} parameter(2)
  ROOT d = TYPE[2,12,12,4]{3,2,1,0} convolution(r, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
)";
  auto with_type = [&](const std::string& type) {
    std::string t = text;
    for (size_t at = t.find("TYPE"); at != std::string::npos; at = t.find("TYPE", at)) t.replace(at, 4, type);
    return PredictMemory(t);
  };
  const int64_t conv_f64 = 2 * 12 * 12 * 8 * 8;
  EXPECT_GE(with_type("f64").temp_bytes, 2 * conv_f64);
  EXPECT_LT(with_type("f32").temp_bytes, 2 * conv_f64 / 2);
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

TEST(MemoryModel, ReductionOverShortDimensionsIsNoTree) {
  // Neither reduced dimension is longer than 32: XLA keeps the reduce one
  // loop, into which it fuses the multiply; no 2 KiB product, no partials.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[32,16]{1,0} parameter(0)
  m = f32[32,16]{1,0} multiply(x, x)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(m, z), dimensions={0,1}, to_apply=add
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, Bf16DotIsComputedInF32) {
  // XLA CPU has no bf16 matrix multiply: the converts feeding the dot write
  // f32 operands (4 KiB and 2 KiB, not half that) and the product is f32.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[32,32]{1,0} parameter(0)
  y = f32[32,16]{1,0} parameter(1)
  a = bf16[32,32]{1,0} convert(x)
  b = bf16[32,16]{1,0} convert(y)
  d = bf16[32,16]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[32,16]{1,0} convert(d)
}
)"));
  EXPECT_GE(p.temp_bytes, 32 * 32 * 4 + 32 * 16 * 4);
}

TEST(MemoryModel, TopKOtherThanF32SortsItsWholeOperand) {
  // XLA sorts all 6x64 f64 values with s32 indices, then slices 3 of each
  // row: 3 KiB of values and 1.5 KiB of indices beside the result. An f32
  // top-k runs XLA's kernel and holds no such scratch.
  const std::string text = R"(HloModule m

ENTRY e {
  x = TYPE[6,64]{1,0} parameter(0)
  t = (TYPE[6,3]{1,0}, s32[6,3]{1,0}) topk(x), k=3, largest=true
  v = TYPE[6,3]{1,0} get-tuple-element(t), index=0
  i = s32[6,3]{1,0} get-tuple-element(t), index=1
  ROOT r = (TYPE[6,3]{1,0}, s32[6,3]{1,0}) tuple(v, i)
}
)";
  auto with_type = [&](const std::string& type) {
    std::string t = text;
    for (size_t at = t.find("TYPE"); at != std::string::npos; at = t.find("TYPE", at)) t.replace(at, 4, type);
    return PredictMemory(t);
  };
  EXPECT_GE(with_type("f64").temp_bytes, 6 * 64 * 8 + 6 * 64 * 4);
  EXPECT_LT(with_type("f32").temp_bytes, 6 * 64 * 4);
}

TEST(MemoryModel, EqualExpressionsAreComputedOnce) {
  // d1 and d2 divide by x + 2, written as (x + 0) + 1 + 1 and as x + 2.
  // XLA's simplifier drops the + 0 and folds the + 1 + 1, its CSE then
  // merges the two divisions: the dot reads one 16 KiB buffer twice, not
  // two buffers.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  two = f32[] constant(2)
  three = f32[] constant(3)
  bz = f32[64,64]{1,0} broadcast(zero), dimensions={}
  b1 = f32[64,64]{1,0} broadcast(one), dimensions={}
  b2 = f32[64,64]{1,0} broadcast(two), dimensions={}
  b3 = f32[64,64]{1,0} broadcast(three), dimensions={}
  x0 = f32[64,64]{1,0} add(x, bz)
  y1 = f32[64,64]{1,0} add(x0, b1)
  y2 = f32[64,64]{1,0} add(y1, b1)
  z = f32[64,64]{1,0} add(x, b2)
  d1 = f32[64,64]{1,0} divide(b3, y2)
  d2 = f32[64,64]{1,0} divide(b3, z)
  ROOT r = f32[64,64]{1,0} dot(d1, d2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"));
  EXPECT_EQ(p.temp_bytes, 64 * 64 * 4);
  EXPECT_EQ(p.buffers, 1);
}

TEST(MemoryModel, LiteralExpressionsAreFoldedIntoLiterals) {
  // XLA evaluates the concatenation of literals at compile time: the
  // executable keeps its 32 elements, not the 4 it was built from.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[32]{0} parameter(0)
  c = f32[4]{0} constant({1, 2, 3, 4})
  b = f32[32]{0} concatenate(c, c, c, c, c, c, c, c), dimensions={0}
  ROOT r = f32[32]{0} add(x, b)
}
)"));
  EXPECT_EQ(p.constant_bytes, 32 * 4);
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, ProducerAFusedLoopWouldEmitTooOftenIsWrittenOut) {
  // The sum reads n through `slices` slices of one element; each slice
  // computes an index of its own, so the fused loop would emit the
  // multiply once per slice. XLA allows 15: with 16 slices it writes n to
  // a buffer (one 64-byte slot), with 15 it folds n into the loop.
  auto with_slices = [](int slices) {
    std::string text = "HloModule m\n\nENTRY e {\n  p = f32[16]{0} parameter(0)\n"
                       "  q = f32[16]{0} parameter(1)\n  n = f32[16]{0} multiply(p, q)\n";
    for (int i = 0; i < slices; ++i) {
      text += "  sl" + std::to_string(i) + " = f32[1]{0} slice(n), slice={[" + std::to_string(i) + ":" +
              std::to_string(i + 1) + "]}\n";
    }
    std::string sum = "sl0";
    for (int i = 1; i < slices; ++i) {
      const std::string next = "a" + std::to_string(i);
      text += std::string(i + 1 == slices ? "  ROOT " : "  ") + next + " = f32[1]{0} add(" + sum + ", sl" +
              std::to_string(i) + ")\n";
      sum = next;
    }
    return PredictMemory(text + "}\n");
  };
  EXPECT_EQ(with_slices(16).temp_bytes, 64);
  EXPECT_EQ(with_slices(15).temp_bytes, 0);
}

TEST(MemoryModel, ExpensiveValueIsNotFoldedIntoTwoLoops) {
  // s = d + 1 is cheap: XLA folds it into both reductions' loops. Its
  // operand d, a division, would then be computed in both: XLA computes
  // it once, into a buffer of its own (one 64-byte slot).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[16]{0} parameter(0)
  three = f32[] constant(3)
  b3 = f32[16]{0} broadcast(three), dimensions={}
  d = f32[16]{0} divide(b3, x)
  one = f32[] constant(1)
  b1 = f32[16]{0} broadcast(one), dimensions={}
  s = f32[16]{0} add(d, b1)
  m = f32[16]{0} multiply(s, s)
  ex = f32[16]{0} exponential(s)
  zero = f32[] constant(0)
  r1 = f32[] reduce(m, zero), dimensions={0}, to_apply=sum
  r2 = f32[] reduce(ex, zero), dimensions={0}, to_apply=sum
  ROOT t = (f32[], f32[]) tuple(r1, r2)
})"));
  EXPECT_EQ(p.temp_bytes, 64);
  EXPECT_EQ(p.buffers, 1);
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

TEST(MemoryModel, ExpandedSolveRunsALoop) {
  // XLA expands the solve into a loop that inverts the diagonal blocks:
  // beside the solve's scratch (the blocks of inverses of a, computed
  // first, and the result: 384 bytes), its counter
  // and condition take a 64-byte slot each of the heap (449 bytes, 512
  // once aligned) and its state's table of three pointers an allocation
  // of its own. (XLA's heap holds two blocks of a and a row more: 728.)
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[8,8]{1,0} parameter(0)
  b = f32[8,4]{1,0} parameter(1)
  ROOT s = f32[8,4]{1,0} triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}
)"));
  EXPECT_EQ(p.temp_bytes, 512 + 3 * 8);
}

TEST(MemoryModel, FilterGradientConvolutionTransposesItsOperands) {
  // A filter gradient reads the input as f01b, the output gradient as
  // i01o and writes 01bf: XLA CPU's convolutions take b01f, 01io and
  // b01f, so its layout assignment transposes both operands into copies
  // (864 and 1152 bytes) and the result out of one (432), three buffers
  // 64-byte aligned: 2480 bytes, as XLA. The copies of the parameters are
  // written as soon as the parameters exist, before the convolution.
  const std::string text = R"(HloModule m

ENTRY e {
  x = f32[2,6,6,3]{3,2,1,0} parameter(0)
  dy = f32[2,6,6,4]{3,2,1,0} parameter(1)
  ROOT dw = f32[3,3,3,4]{3,2,1,0} convolution(x, dy), window={size=6x6 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
}
)";
  EXPECT_EQ(PredictMemory(text).temp_bytes, 896 + 1152 + 432);
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  const exla::ModuleBuffers buffers = exla::PredictBuffers(*module);
  int64_t before = 0;
  for (const exla::HeapBuffer& buffer : buffers.temporaries) {
    if (buffer.life.start < buffer.life.end) ++before;
  }
  EXPECT_EQ(before, 2);
}

TEST(MemoryModel, LoopSimplifierDropsRepeatedAndLiteralElements) {
  // i and j start from the same literal and step together: XLA's while
  // loop simplifier keeps one of them (one 4-byte counter, not two), and
  // drops the literal bound, which the body returns unchanged. The state
  // keeps i and v: a table of 16 bytes beside a heap of the counter and
  // the condition (65 bytes, 128 aligned). XLA stacks the table first and
  // comes to 64 + 65 = 129.
  const std::string text = R"(HloModule m

body {
  p = (s32[], s32[], s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  bound = s32[] get-tuple-element(p), index=1
  j = s32[] get-tuple-element(p), index=2
  v = f32[16]{0} get-tuple-element(p), index=3
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  j2 = s32[] add(j, one)
  e = f32[16]{0} exponential(v)
  ROOT t = (s32[], s32[], s32[], f32[16]{0}) tuple(i2, bound, j2, e)
}

cond {
  p = (s32[], s32[], s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  bound = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, bound), direction=LT
}

ENTRY e {
  x = f32[16]{0} parameter(0)
  zero = s32[] constant(0)
  n = s32[] constant(5)
  t0 = (s32[], s32[], s32[], f32[16]{0}) tuple(zero, n, zero, x)
  w = (s32[], s32[], s32[], f32[16]{0}) while(t0), condition=cond, body=body
  j = s32[] get-tuple-element(w), index=2
  ROOT r = f32[16]{0} get-tuple-element(w), index=3
})";
  EXPECT_EQ(PredictMemory(text).temp_bytes, 128 + 16);
  // The same when j's update comes out of a tuple built in place (the
  // result of an inlined call), which the simplifier reads through.
  std::string through_tuple = text;
  const std::string update = "  j2 = s32[] add(j, one)\n";
  through_tuple.replace(through_tuple.find(update), update.size(),
                        "  jj = s32[] add(j, one)\n  jt = (s32[]) tuple(jj)\n"
                        "  j2 = s32[] get-tuple-element(jt), index=0\n");
  EXPECT_EQ(PredictMemory(through_tuple).temp_bytes, 128 + 16);
}

TEST(MemoryModel, PhiloxGeneratorWritesItsKeyWords) {
  // XLA expands a Philox rng-bit-generator into loops that read the two
  // 32-bit words of the key in every round of every element: too often to
  // fold them in, so each is written to a 64-byte slot of its own (XLA's
  // heap holds exactly those two: 68 bytes). The model also keeps the new
  // state, which XLA drops when nothing reads it, and its table.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  s = u64[3]{0} parameter(0)
  r = (u64[3]{0}, u32[8]{0}) rng-bit-generator(s), algorithm=rng_philox
  ROOT v = u32[8]{0} get-tuple-element(r), index=1
}
)"));
  EXPECT_EQ(p.temp_bytes, 3 * 64 + 16);
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

// Sorts values with the iota of their indices; the program keeps the sorted
// values only, through a tuple it then takes apart. @ names the comparator:
// `values` compares the values only, `ties` breaks ties by index.
constexpr char kSortWithIndices[] = R"(HloModule m

values {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ties {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  ilt = pred[] compare(i, j), direction=LT
  both = pred[] and(eq, ilt)
  ROOT tie = pred[] or(lt, both)
}

ENTRY e {
  x = f32[64]{0} parameter(0)
  iota = s32[64]{0} iota(), iota_dimension=0
  s = (f32[64]{0}, s32[64]{0}) sort(x, iota), dimensions={0}, to_apply=@
  v = f32[64]{0} get-tuple-element(s), index=0
  ix = s32[64]{0} get-tuple-element(s), index=1
  t = (f32[64]{0}, s32[64]{0}) tuple(v, ix)
  w = f32[64]{0} get-tuple-element(t), index=0
  ROOT r = f32[64]{0} sqrt(w)
})";

std::string SortModule(const std::string& comparator) {
  std::string text = kSortWithIndices;
  text.replace(text.find('@'), 1, comparator);
  return text;
}

TEST(MemoryModel, SortDropsTheArraysNothingReads) {
  // XLA's tuple simplifier leaves the sorted indices unread and its sort
  // simplifier drops them with their iota: the sort writes the values
  // alone, into the buffer the square root then writes the result over.
  const MemoryPrediction p = PredictMemory(SortModule("values"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, SortKeepsTheArraysItsComparatorReads) {
  // Ties broken by index: the sorted indices stay, written in place over
  // the iota (XLA sorts in place an operand only the sort reads), beside
  // the table of the sort's two results.
  const MemoryPrediction p = PredictMemory(SortModule("ties"));
  EXPECT_EQ(p.temp_bytes, 256 + 16);
}

// A Cholesky factorisation and a solve with its factor, while an unrelated
// product runs; @ is a second solve, or nothing.
constexpr char kFactorAndSolve[] = R"(HloModule m

ENTRY e {
  a = f32[16,16]{1,0} parameter(0)
  b = f32[16,4]{1,0} parameter(1)
  x = f32[64,64]{1,0} parameter(2)
  ex = f32[64,64]{1,0} exponential(x)
  d = f32[64,64]{1,0} dot(ex, ex), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  l = f32[16,16]{1,0} cholesky(a), lower=true
  s = f32[16,4]{1,0} triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  @
  ROOT t = (f32[64,64]{1,0}, f32[16,4]{1,0}) tuple(d, s)
})";

// The scratch buffers of `buffers` alive before the step of the instruction
// that holds them: what an expansion computes ahead of running.
std::vector<int64_t> EarlyScratch(const exla::ModuleBuffers& buffers) {
  std::vector<int64_t> bytes;
  for (const exla::HeapBuffer& buffer : buffers.temporaries) {
    if (buffer.kind == exla::HeapBuffer::Kind::kScratch && buffer.life.start < buffer.life.end) {
      bytes.push_back(buffer.life.bytes);
    }
  }
  std::sort(bytes.begin(), bytes.end());
  return bytes;
}

TEST(MemoryModel, InlinedExpansionsComputeWhatReadsNothingFirst) {
  // XLA inlines an expansion no other instruction shares: its breadth-first
  // schedule then runs the Cholesky's lower-triangle mask (pred[16,16]) and
  // the solve's zero-filled blocks of inverses (f32[1,16,16]), which read
  // nothing, before anything else; both stay alive until their expansion.
  std::string text = kFactorAndSolve;
  text.replace(text.find('@'), 1, "");
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  EXPECT_TRUE(EarlyScratch(exla::PredictBuffers(*module)) == std::vector<int64_t>({16 * 16, 16 * 16 * 4}));
}

TEST(MemoryModel, SharedExpansionsStayCalls) {
  // Two solves of one signature call one expansion, which XLA leaves a
  // call: its blocks are computed when it is called, with its scratch.
  std::string text = kFactorAndSolve;
  text.replace(text.find('@'), 1,
               "s2 = f32[16,4]{1,0} triangular-solve(l, s), left_side=true, lower=true, transpose_a=NO_TRANSPOSE");
  text.replace(text.find("tuple(d, s)"), 11, "tuple(d, s2)");
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  EXPECT_TRUE(EarlyScratch(exla::PredictBuffers(*module)) == std::vector<int64_t>({16 * 16}));
}

TEST(MemoryModel, QrStepsWriteScalarsAndVectorsOfTheirOwn) {
  // Each step of the Householder loop of TensorFlow's Qr (8 x 4 here)
  // writes, each to a buffer of its own: the counter's copy and sum and
  // the condition, four scalars (the column's norm, its square root, the
  // reflector's diagonal, tau), two vectors of 8 (the column, the
  // reflector) and two of 4 (their product with the matrix, the taus).
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  ROOT qr = (f32[8,4]{1,0}, f32[4]{0}) custom-call(a), custom_call_target="Qr"
})");
  const exla::ModuleBuffers buffers = exla::PredictBuffers(*module);
  std::vector<int64_t> scratch;
  for (const exla::HeapBuffer& buffer : buffers.temporaries) {
    if (buffer.kind == exla::HeapBuffer::Kind::kScratch) scratch.push_back(buffer.life.bytes);
  }
  std::sort(scratch.begin(), scratch.end());
  EXPECT_TRUE(scratch == std::vector<int64_t>({1, 4, 4, 4, 4, 4, 4, 16, 16, 32, 32}));
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

TEST(MemoryModel, LoopThatRunsOnceIsItsBody) {
  // XLA's while loop simplifier replaces a loop of one trip by its body:
  // no table of the state, no counter or condition; the sine writes the
  // result. (The counter's sum, which only the inlined body's tuple read,
  // goes with XLA's tuple simplifier: tuple_simplifier.h.)
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[16]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  e = f32[16]{0} sine(v)
  ROOT t = (s32[], f32[16]{0}) tuple(n, e)
}

cond {
  p = (s32[], f32[16]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(1)
  ROOT lt = pred[] compare(i, c), direction=LT
}

ENTRY e {
  x = f32[16]{0} parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[16]{0}) tuple(z, x)
  w = (s32[], f32[16]{0}) while(t0), condition=cond, body=body
  ROOT r = f32[16]{0} get-tuple-element(w), index=1
})"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, ElementReadsOfTuplesAreFolded) {
  // XLA's tuple simplifier reads the exponential straight from where it is
  // written; the product, which only the tuple held, is dead and removed.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  d = f32[64,64]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ex = f32[64,64]{1,0} exponential(x)
  t = (f32[64,64]{1,0}, f32[64,64]{1,0}) tuple(ex, d)
  ROOT r = f32[64,64]{1,0} get-tuple-element(t), index=0
})"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(HeapPacking, KeepsTheSmallerOfSpatialAndTemporal) {
  // Largest first leaves a gap no later buffer fits (a heap of 576);
  // longest-lived first packs into 512. XLA keeps the smaller.
  const std::vector<BufferLife> lives = {{128, 0, 5}, {128, 3, 5}, {192, 4, 5}, {128, 3, 3}, {128, 2, 3}};
  EXPECT_EQ(exla::PackedHeapBytes(lives, 64), 512);
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

TEST(MemoryModel, DotReadsItsBatchDimensionsFirst) {
  // XLA's GEMM wants each operand's batch dimensions first: both operands
  // (batch dimensions 0 and 2) are transposed into copies, made as soon as
  // the parameters exist (XLA: 2048 bytes of temporaries).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[2,8,2,8]{3,2,1,0} parameter(0)
  b = f32[2,8,2,8]{3,2,1,0} parameter(1)
  ROOT d = f32[2,2,8,8]{3,2,1,0} dot(a, b), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
}
)"));
  EXPECT_EQ(p.temp_bytes, 2 * 1024);
}

TEST(MemoryModel, DotOfSeveralContractingDimensionsReadsThemInCanonicalOrder) {
  // With two contracting dimensions, XLA merges them into one, in its
  // canonical order for a right operand (contracting, then free): w's
  // free dimension comes first, so w is transposed into a copy (XLA: 1024).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  g = f32[2,8,2,8]{3,2,1,0} parameter(0)
  w = f32[16,2,8]{2,1,0} parameter(1)
  ROOT d = f32[2,8,16]{2,1,0} dot(g, w), lhs_contracting_dims={2,3}, rhs_contracting_dims={1,2}
}
)"));
  EXPECT_EQ(p.temp_bytes, 1024);
}

TEST(MemoryModel, ProducerOfATransposedDotOperandIsWrittenTransposed) {
  // The add is read only by a dot that needs it transposed: XLA fuses it
  // into the transposed copy, which (a transpose) it cannot write over d.
  // d and the copy are alive together (XLA: 2048 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[2,8,16]{2,1,0} parameter(0)
  w = f32[16,2,8]{2,1,0} parameter(1)
  y = f32[2,8,2,8]{3,2,1,0} parameter(2)
  v = f32[2,1,2,8]{3,2,1,0} parameter(3)
  d = f32[2,8,2,8]{3,2,1,0} dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  a = f32[2,8,2,8]{3,2,1,0} add(d, y)
  ROOT e = f32[2,2,8,1]{3,2,1,0} dot(a, v), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
}
)"));
  EXPECT_EQ(p.temp_bytes, 2 * 1024);
}

TEST(MemoryModel, TransposedCopiesOfOneValueInOneOrderAreOne) {
  // Two dots read d with its batch dimensions moved first, the same way:
  // XLA's CSE leaves one copy, alive until the second dot; d itself dies
  // at the copy (and takes a result's allocation). With y's copy, two
  // temporaries (XLA: 2048 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[2,8,16]{2,1,0} parameter(0)
  w = f32[16,2,8]{2,1,0} parameter(1)
  y = f32[2,8,2,8]{3,2,1,0} parameter(2)
  d = f32[2,8,2,8]{3,2,1,0} dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  e1 = f32[2,2,8,8]{3,2,1,0} dot(d, y), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  e2 = f32[2,2,8,8]{3,2,1,0} dot(d, e1), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  ROOT t = (f32[2,2,8,8]{3,2,1,0}, f32[2,2,8,8]{3,2,1,0}) tuple(e1, e2)
}
)"));
  EXPECT_EQ(p.temp_bytes, 2 * 1024);
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

TEST(MemoryModel, SortOfIndicesOtherThanAnIotaStaysASortWhenOnlyItsFrontIsRead) {
  // Only the first 8 of each row are read, but the indices are computed, not
  // an iota: XLA's top-k rewriter leaves the sort, which sorts both operands
  // in place: 1 MB + 1 MB and the sort's table (XLA: 4194320 bytes). Read as
  // a top-k, the model would predict 2 MB less than XLA plans.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = f32[64,4096]{1,0} parameter(0)
  i = s32[64,4096]{1,0} parameter(1)
  keys = f32[64,4096]{1,0} negate(x)
  idx = s32[64,4096]{1,0} add(i, i)
  s = (f32[64,4096]{1,0}, s32[64,4096]{1,0}) sort(keys, idx), dimensions={1}, to_apply=gt
  v = f32[64,4096]{1,0} get-tuple-element(s), index=0
  w = s32[64,4096]{1,0} get-tuple-element(s), index=1
  sv = f32[64,8]{1,0} slice(v), slice={[0:64], [0:8]}
  sw = s32[64,8]{1,0} slice(w), slice={[0:64], [0:8]}
  ROOT t = (f32[64,8]{1,0}, s32[64,8]{1,0}) tuple(sv, sw)
}
)"));
  EXPECT_EQ(p.temp_bytes, 4194320);
}

TEST(MemoryModel, FusedLoopHoldsAtMostSixReductions) {
  // The root's loop would fold seven reductions; XLA's fusion takes six
  // and writes the seventh out (an f64 too large for the f32 result's
  // allocation): one slot (XLA: 8 bytes).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}

ENTRY e {
  x = f64[8]{0} parameter(0)
  z = f64[] constant(0)
  e1 = f64[8]{0} exponential(x)
  e2 = f64[8]{0} sine(x)
  e3 = f64[8]{0} cosine(x)
  e4 = f64[8]{0} log(x)
  e5 = f64[8]{0} tanh(x)
  e6 = f64[8]{0} sqrt(x)
  e7 = f64[8]{0} rsqrt(x)
  r1 = f64[] reduce(e1, z), dimensions={0}, to_apply=add
  r2 = f64[] reduce(e2, z), dimensions={0}, to_apply=add
  r3 = f64[] reduce(e3, z), dimensions={0}, to_apply=add
  r4 = f64[] reduce(e4, z), dimensions={0}, to_apply=add
  r5 = f64[] reduce(e5, z), dimensions={0}, to_apply=add
  r6 = f64[] reduce(e6, z), dimensions={0}, to_apply=add
  r7 = f64[] reduce(e7, z), dimensions={0}, to_apply=add
  a1 = f64[] add(r1, r2)
  a2 = f64[] add(a1, r3)
  a3 = f64[] add(a2, r4)
  a4 = f64[] add(a3, r5)
  a5 = f64[] add(a4, r6)
  a6 = f64[] add(a5, r7)
  ROOT c = f32[] convert(a6)
}
)"));
  EXPECT_EQ(p.temp_bytes, 8);
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

}  // namespace
