// The memory model's predictions that XLA's fusion decides
// (cc/model/fusion/): which values fusion folds into loops and which it
// writes out, the limits on what one loop computes, the loops XLA outlines
// for threads and the transposed copies dots read. Each module is small
// enough to count its bytes by hand.
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

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

// exp(x).y for x of `rows` x `inner` and y of `inner` x `columns`.
std::string ProductOfAnExponential(int rows, int inner, int columns) {
  const std::string r = std::to_string(rows), i = std::to_string(inner), c = std::to_string(columns);
  return "HloModule m\n\nENTRY e {\n  x = f32[" + r + "," + i + "]{1,0} parameter(0)\n  y = f32[" + i + "," +
         c + "]{1,0} parameter(1)\n  ex = f32[" + r + "," + i + "]{1,0} exponential(x)\n  ROOT d = f32[" + r +
         "," + c + "]{1,0} dot(ex, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

TEST(MemoryModel, DotOperandIsWrittenOut) {
  // A GEMM reads buffers: the exponential feeding it is a temporary.
  const MemoryPrediction p = PredictMemory(ProductOfAnExponential(64, 32, 16));
  EXPECT_EQ(p.temp_bytes, 64 * 32 * 4);
  EXPECT_EQ(p.buffers, 1);
}

TEST(MemoryModel, EmptyDotOperandTakesNoBuffer) {
  // As DotOperandIsWrittenOut, with no rows: the exponential the GEMM reads
  // has no element, so there is nothing to place in the heap.
  const MemoryPrediction p = PredictMemory(ProductOfAnExponential(0, 32, 16));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.buffers, 0);
}

TEST(MemoryModel, MatrixOfAMatrixVectorProductIsFusedIntoIt) {
  // y is a column (64 x 1, 256 bytes) contracted along its dimension 0: the
  // product is a loop of its own into which XLA CPU fuses the exponential
  // feeding the matrix, so nothing is written but the result. (The matrix
  // contracts its dimension 1: the vector's side is read from y's dimensions.)
  const MemoryPrediction p = PredictMemory(ProductOfAnExponential(256, 64, 1));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(MemoryModel, TransposedMatrixOfAMatrixVectorProductIsFusedIntoIt) {
  // The matrix is a transpose of a select: XLA's simplifier makes the small
  // matrix-vector product a multiply and a reduce, into which the
  // transpose and the select fuse. Folded into the dot's dimension
  // numbers instead, the transpose would leave the select a buffer of
  // 17 x 217 doubles. XLA: no temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f64[17,217]{1,0} parameter(0)
  v = f64[17,1]{1,0} parameter(1)
  h = f64[] constant(0.5)
  hb = f64[17,217]{1,0} broadcast(h), dimensions={}
  e = f64[17,217]{1,0} add(a, a)
  m = f64[17,217]{1,0} multiply(hb, e)
  g = pred[17,217]{1,0} compare(e, hb), direction=GT
  s = f64[17,217]{1,0} select(g, e, m)
  t = f64[217,17]{0,1} transpose(s), dimensions={1,0}
  ROOT d = f64[217,1]{1,0} dot(t, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
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

TEST(MemoryModel, LoopCountsEachFusedProducerOnce) {
  // m8 = d^256 by eight squarings, folded into one loop: its fused
  // computation holds each multiply once (8 x 1280 flops for 10 KiB
  // moved: memory-bound, one thread), where following both operands of
  // every multiply would count 255 of them and outline the loop. Not
  // outlined, m8 writes over d, which dies there. XLA (jaxlib 0.7.1):
  // temp 5120, total 18944.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  p = f32[40,32]{1,0} parameter(0)
  w = f32[32,32]{1,0} parameter(1)
  v = f32[32,16]{1,0} parameter(2)
  d = f32[40,32]{1,0} dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  m1 = f32[40,32]{1,0} multiply(d, d)
  m2 = f32[40,32]{1,0} multiply(m1, m1)
  m3 = f32[40,32]{1,0} multiply(m2, m2)
  m4 = f32[40,32]{1,0} multiply(m3, m3)
  m5 = f32[40,32]{1,0} multiply(m4, m4)
  m6 = f32[40,32]{1,0} multiply(m5, m5)
  m7 = f32[40,32]{1,0} multiply(m6, m6)
  m8 = f32[40,32]{1,0} multiply(m7, m7)
  ROOT s = f32[40,16]{1,0} dot(m8, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 40 * 32 * 4);
  EXPECT_EQ(p.peak_bytes(), 18944);
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

TEST(MemoryModel, DivisionIsNotFusedIntoALoopThatBroadcastsWhatItFeeds) {
  // n = x / w feeds a, which the loop of e reads through a broadcast that
  // widens it four times. XLA's fusion, having fused the broadcast and a,
  // counts n as reused and will not compute a division four times per
  // element: n is written out (XLA's buffer assignment: 32,768 bytes of
  // temporaries).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[128,64]{1,0} parameter(0)
  w = f32[128,64]{1,0} parameter(1)
  n = f32[128,64]{1,0} divide(x, w)
  a = f32[128,64]{1,0} add(n, w)
  ba = f32[128,64,4]{2,1,0} broadcast(a), dimensions={0,1}
  ROOT e = f32[128,64,4]{2,1,0} exponential(ba)
}
)"));
  EXPECT_EQ(p.temp_bytes, 32768);
}

TEST(MemoryModel, LoopWritingAReshapedResultDoesNotWriteOverItsOperand) {
  // x = exp(-d) is read only by the reshape r, a bitcast XLA fuses into
  // x's loop, which then writes a 64 x 192 result: not the shape of d, so
  // it cannot be written over d (XLA shares an operand's buffer only with a
  // result of the same shape). d is a 49,152-byte temporary beside the
  // result; XLA's buffer assignment: 49,152.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[128,8]{1,0} parameter(0)
  b = f32[8,96]{1,0} parameter(1)
  d = f32[128,96]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[128,96]{1,0} negate(d)
  x = f32[128,96]{1,0} exponential(n)
  ROOT r = f32[64,192]{1,0} reshape(x)
}
)"));
  EXPECT_EQ(p.temp_bytes, 49152);
}

TEST(MemoryModel, LongMinorConcatenationIsWrittenOut) {
  // c joins two 64 x 128 arrays along their minor dimension into 256
  // columns: XLA CPU runs it as a copy loop of its own, so c (65,536
  // bytes) is stored, beside a (its reader b is a loop of its own too) and
  // beside ca, the GEMM's operand. The concatenate s of the other operand
  // joins along the major dimension and is fused. XLA's buffer assignment:
  // 147,456 bytes of temporaries.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f32[64,128]{1,0} parameter(0)
  y = f32[128,16]{1,0} parameter(1)
  a = f32[64,128]{1,0} exponential(x)
  b = f32[64,128]{1,0} negate(a)
  c = f32[64,256]{1,0} concatenate(a, b), dimensions={1}
  ca = f32[64,256]{1,0} add(c, c)
  s = f32[256,16]{1,0} concatenate(y, y), dimensions={0}
  ROOT d = f32[64,16]{1,0} dot(ca, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 147456);
}

TEST(MemoryModel, ExpensiveValueWhoseReadersShareOneLoopIsFusedIntoIt) {
  // q = d / d has two readers, m and s, and m is read only by s: both end
  // in s's loop, the GEMM's operand. XLA fuses m into s, after which s is
  // q's only reader, and fuses q as well: only d and s are stored, 32,768
  // bytes each, never at once past s (XLA's buffer assignment: 32,768).
  // Kept in a buffer of its own, q would double that.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[64,8]{1,0} parameter(0)
  b = f32[8,128]{1,0} parameter(1)
  y = f32[128,4]{1,0} parameter(2)
  d = f32[64,128]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[64,128]{1,0} divide(d, d)
  m = f32[64,128]{1,0} multiply(q, d)
  s = f32[64,128]{1,0} add(m, q)
  ROOT p = f32[64,4]{1,0} dot(s, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 32768);
}

TEST(MemoryModel, OperandAConvolutionReadsInAnotherLayoutIsComputedIntoItsCopy) {
  // The filter gradient reads a (f01b) through a transposed copy. XLA CPU
  // fuses after layout assignment: the add is computed into that copy and
  // again in the sum's loop, and never written in its own layout. XLA's
  // buffer assignment: 26,208 (the copy of a, 18,432; of x, 6,912; the
  // result before its transpose, 864). Written out, a would add 18,432.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[4,12,12,3]{3,2,1,0} parameter(0)
  g = f32[4,12,12,8]{3,2,1,0} parameter(1)
  h = f32[4,12,12,8]{3,2,1,0} parameter(2)
  a = f32[4,12,12,8]{3,2,1,0} add(g, h)
  zero = f32[] constant(0)
  s = f32[8]{0} reduce(a, zero), dimensions={0,1,2}, to_apply=add
  c = f32[3,3,3,8]{3,2,1,0} convolution(x, a), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT t = (f32[8]{0}, f32[3,3,3,8]{3,2,1,0}) tuple(s, c)
}
)"));
  EXPECT_EQ(p.temp_bytes, 26208);
}

TEST(MemoryModel, CheapProducerIsCopiedIntoTheReaderThatCanTakeIt) {
  // m = d * broadcast(v) is read by a tree reduction (its reduce-window
  // reads m from memory) and by the add r. XLA writes m for the tree and
  // computes it again inside r's loop: r reads d, not m, and the sums,
  // whose partial sums come and go before it. XLA's buffer assignment:
  // 67,584 (65,536 of m, 2,048 of sums); the model keeps 1,024 more of
  // partial sums. Deciding for all readers at once, the model counted only
  // the sums (3,072).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  a = f32[256,8]{1,0} parameter(0)
  b = f32[8,64]{1,0} parameter(1)
  v = f32[256]{0} parameter(2)
  d = f32[256,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bv = f32[256,64]{1,0} broadcast(v), dimensions={0}
  m = f32[256,64]{1,0} multiply(d, bv)
  zero = f32[] constant(0)
  s = f32[256]{0} reduce(m, zero), dimensions={1}, to_apply=add
  bs = f32[256,64]{1,0} broadcast(s), dimensions={0}
  ROOT r = f32[256,64]{1,0} add(m, bs)
}
)"));
  EXPECT_GE(p.temp_bytes, 67584);
  EXPECT_LE(p.temp_bytes, 67584 + 1024);
}

TEST(MemoryModel, CheapProducerSeenThroughAReshapeIsCopiedIntoTheLoop) {
  // m = broadcast(u) + broadcast(v), reshaped to mr, is read by a tree
  // reduction (its reduce-window reads mr from memory) and by the subtract
  // r. XLA fuses the reshape, a bitcast, with m, writes the pair for the
  // reduce-window and computes it again in r's loop from u and v: m dies
  // at the reduce-window and takes the result's allocation before r does.
  // XLA's buffer assignment: 69,380 in all, 2,560 of temporaries (the
  // partial sums and s). Counting m's readers without looking through the
  // reshape, the model kept m (65,536) alive to r beside the result.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  u = f32[256]{0} parameter(0)
  v = f32[64]{0} parameter(1)
  bu = f32[256,64]{1,0} broadcast(u), dimensions={0}
  bv = f32[256,64]{1,0} broadcast(v), dimensions={1}
  m = f32[256,64]{1,0} add(bu, bv)
  mr = f32[128,128]{1,0} reshape(m)
  zero = f32[] constant(0)
  s = f32[128]{0} reduce(mr, zero), dimensions={1}, to_apply=add
  bs = f32[128,128]{1,0} broadcast(s), dimensions={0}
  ROOT r = f32[128,128]{1,0} subtract(mr, bs)
}
)"));
  EXPECT_EQ(p.temp_bytes, 2560);
  EXPECT_EQ(p.peak_bytes(), 69380);
}

TEST(MemoryModel, TreeReductionFreesItsInputAtItsReduceWindow) {
  // a's sum s is read only by the last loop r, after two GEMMs. XLA runs
  // s's reduce-window as soon as a is ready and frees a there; only the
  // reduce of the partial sums is fused into r. XLA's buffer assignment:
  // 786,432 of temporaries (three f32[256,256] at the first GEMM). With s
  // folded into r, the model kept a alive to r: 1,048,576.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[256,256]{1,0} parameter(0)
  a = f32[256,256]{1,0} exponential(p)
  zero = f32[] constant(0)
  s = f32[256]{0} reduce(a, zero), dimensions={1}, to_apply=add
  b = f32[256,256]{1,0} tanh(p)
  c = f32[256,256]{1,0} dot(b, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[256,256]{1,0} tanh(c)
  e = f32[256,256]{1,0} dot(d, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[256]{0} reduce(e, zero), dimensions={1}, to_apply=add
  ROOT r = f32[256]{0} divide(t, s)
}
)"));
  EXPECT_EQ(p.temp_bytes, 786432);
}

TEST(MemoryModel, DynamicSliceAfterALoopTakesACopyOfTheProducer) {
  // m = d * broadcast(v) enters a loop that returns it unchanged, and its
  // row at i is read after the loop. XLA (as the model) reads that row from
  // m itself, not from the loop's result, and its fusion copies m into the
  // slice's loop, which reads d: d stays alive beside m and the loop's copy
  // of m. XLA's buffer assignment: 131,096 of temporaries; the model packs
  // 64 more. Reading m's buffer, the model kept 67,672.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[256,64]{1,0}, f32[64]{0}) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(k, n), direction=LT
}

body {
  p = (s32[], f32[256,64]{1,0}, f32[64]{0}) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  m = f32[256,64]{1,0} get-tuple-element(p), index=1
  acc = f32[64]{0} get-tuple-element(p), index=2
  z = s32[] constant(0)
  row = f32[1,64]{1,0} dynamic-slice(m, k, z), dynamic_slice_sizes={1,64}
  r = f32[64]{0} reshape(row)
  acc1 = f32[64]{0} add(acc, r)
  ROOT t = (s32[], f32[256,64]{1,0}, f32[64]{0}) tuple(k1, m, acc1)
}

ENTRY e {
  a = f32[256,8]{1,0} parameter(0)
  b = f32[8,64]{1,0} parameter(1)
  v = f32[256]{0} parameter(2)
  i = s32[] parameter(3)
  d = f32[256,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bv = f32[256,64]{1,0} broadcast(v), dimensions={0}
  m = f32[256,64]{1,0} multiply(d, bv)
  zero = f32[] constant(0)
  s = f32[256]{0} reduce(m, zero), dimensions={1}, to_apply=add
  c0 = s32[] constant(0)
  init = f32[64]{0} broadcast(zero), dimensions={}
  st = (s32[], f32[256,64]{1,0}, f32[64]{0}) tuple(c0, m, init)
  w = (s32[], f32[256,64]{1,0}, f32[64]{0}) while(st), condition=cond, body=body
  mw = f32[256,64]{1,0} get-tuple-element(w), index=1
  acc = f32[64]{0} get-tuple-element(w), index=2
  z = s32[] constant(0)
  ds = f32[1,64]{1,0} dynamic-slice(mw, i, z), dynamic_slice_sizes={1,64}
  ROOT t = (f32[256]{0}, f32[1,64]{1,0}, f32[64]{0}) tuple(s, ds, acc)
}
)"));
  EXPECT_GE(p.temp_bytes, 131096);
  EXPECT_LE(p.temp_bytes, 131096 + 64);
}

TEST(MemoryModel, OperandReadOnSeveralPathsOfALoopCountsOnceForThreads) {
  // The select reads d three times (directly, in the compare, in the
  // product) but its loop takes d once: 2 x 212504 bytes, under the 512 KiB
  // at which XLA outlines a loop for threads. Not outlined, the loop writes
  // over d, which dies there. XLA: temp 219908 (d, the select over it, the
  // partial sums of the reduce beside it).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[202,16]{1,0} parameter(0)
  y = f32[16,263]{1,0} parameter(1)
  d = f32[202,263]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[202,263]{1,0} broadcast(zero), dimensions={}
  positive = pred[202,263]{1,0} compare(d, zeros), direction=GT
  half = f32[] constant(0.5)
  halves = f32[202,263]{1,0} broadcast(half), dimensions={}
  m = f32[202,263]{1,0} multiply(d, halves)
  s = f32[202,263]{1,0} select(positive, d, m)
  ROOT r = f32[263]{0} reduce(s, zero), dimensions={0}, to_apply=sum
}
)"));
  EXPECT_EQ(p.temp_bytes, 219908);
}

// A difference of two arrays read by a loop result t and, through t, by a
// row sum's loop: XLA would have to read it both fused and through t.
std::string DifferenceReadAlongsideAResult(const std::string& second_factor) {
  return R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY e {
  a = f32[256,8]{1,0} parameter(0)
  b = f32[256,8]{1,0} parameter(1)
  c = f32[256,8]{1,0} parameter(2)
  s = f32[256,8]{1,0} subtract(a, b)
  t = f32[256,8]{1,0} add(c, s)
  u = f32[256,8]{1,0} subtract(t, c)
  v = f32[256,8]{1,0} multiply()" + second_factor + R"(, s)
  zero = f32[] constant(0)
  w = f32[256]{0} reduce(v, zero), dimensions={1}, to_apply=add
  ROOT r = (f32[256,8]{1,0}, f32[256]{0}) tuple(t, w)
}
)";
}

TEST(MemoryModel, ProducerOnAPathThroughAWrittenValueIsWrittenOnce) {
  // s reads two arrays as large as itself, and the row sum reaches it
  // also through t, a result: XLA does not duplicate it
  // (ComputeGloballyUnfusible) and plans its 8,192 bytes.
  const MemoryPrediction p = PredictMemory(DifferenceReadAlongsideAResult("u"));
  EXPECT_EQ(p.temp_bytes, 256 * 8 * 4);
}

TEST(MemoryModel, ProducerFusedOnEveryPathIsCopiedIntoItsReaders) {
  // The row sum reads s directly: XLA copies s into both loops, no buffer.
  const MemoryPrediction p = PredictMemory(DifferenceReadAlongsideAResult("c"));
  EXPECT_EQ(p.temp_bytes, 0);
}

// A top-k (f64: XLA has no kernel, so it sorts s's rows) of s, the row sums
// of the squared differences of x's rows, `depth` values deep.
std::string TopKOfRowSums(const std::string& depth) {
  const std::string cube = "f64[50,50," + depth + "]{2,1,0}";
  return R"(HloModule m

sum {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] add(a, b)
}

ENTRY e {
  x = f64[50,)" + depth + R"(]{1,0} parameter(0)
  y = f64[50,2]{1,0} parameter(1)
  bx = )" + cube + R"( broadcast(x), dimensions={0,2}
  by = )" + cube + R"( broadcast(x), dimensions={1,2}
  d = )" + cube + R"( subtract(bx, by)
  sq = )" + cube + R"( multiply(d, d)
  zero = f64[] constant(0)
  s = f64[50,50]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  tk = (f64[50,8]{1,0}, s32[50,8]{1,0}) topk(s), k=8, largest=true
  v = f64[50,8]{1,0} get-tuple-element(tk), index=0
  l = f64[50,8]{1,0} log(v)
  ROOT p = f64[8,2]{1,0} dot(l, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)";
}

TEST(MemoryModel, ReductionsAdditionsCountTowardOutliningItsLoop) {
  // s's loop reads 1.6 KB and writes 20 KB, but computes 30,000 flops: a
  // subtraction and a product per element of the cube, and an addition per
  // element folded into a sum (HloCostAnalysis::HandleReduce counts the
  // reducer once for each). That tips it over XLA's threshold, so XLA
  // outlines it into a call, and the sort cannot take its buffer (the value
  // is defined inside the call). XLA: temp 40,032 (s and the sorted copy).
  EXPECT_EQ(PredictMemory(TopKOfRowSums("4")).temp_bytes, 40032);
}

TEST(MemoryModel, SmallReductionIsSortedInPlace) {
  // Half as deep, s's loop stays in the entry and the sort of its rows
  // writes over it. XLA: temp 23,232.
  EXPECT_EQ(PredictMemory(TopKOfRowSums("2")).temp_bytes, 23232);
}

// t, the total of c = s + s, is a tree reduction whose reduce-window reads c
// from memory; r reads c at its own elements.
std::string CheapValueOverAnExpensiveOne(const std::string& expensive) {
  return R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[225,159]{1,0} parameter(0)
  zero = f32[] constant(0)
  s = f32[225,159]{1,0} )" + expensive + R"(
  c = f32[225,159]{1,0} add(s, s)
  t = f32[] reduce(c, zero), dimensions={0,1}, to_apply=sum
  tb = f32[225,159]{1,0} broadcast(t), dimensions={}
  gt = pred[225,159]{1,0} compare(c, tb), direction=GT
  h = f32[] constant(0.5)
  hb = f32[225,159]{1,0} broadcast(h), dimensions={}
  sh = f32[225,159]{1,0} multiply(hb, c)
  ROOT r = f32[225,159]{1,0} select(gt, c, sh)
}
)";
}

TEST(MemoryModel, ExpensiveValueUnderACopiedReaderIsWrittenOnce) {
  // c is written for the reduce-window and copied into r's loop. The
  // exponential under it then has two readers, and fused into both it
  // would be computed twice, so XLA writes it. XLA: temp 143,264 (a
  // 140 KiB array); the model without the rule had everything fused into
  // the result's loop or in the result's buffer (temp 196).
  EXPECT_GE(PredictMemory(CheapValueOverAnExpensiveOne("exponential(x)")).temp_bytes, 143100);
}

TEST(MemoryModel, ReductionUnderACopiedReaderIsWrittenOnce) {
  // As above, with a sum over a third dimension under c. XLA: temp 143,264.
  const std::string sum = "reduce(y, zero), dimensions={2}, to_apply=sum";
  std::string text = CheapValueOverAnExpensiveOne(sum);
  const std::string x = "x = f32[225,159]{1,0} parameter(0)";
  text.replace(text.find(x), x.size(), "y = f32[225,159,2]{2,1,0} parameter(0)");
  EXPECT_GE(PredictMemory(text).temp_bytes, 143100);
}

TEST(MemoryModel, ExpensiveValueInACopiedReadersLoopIsWrittenOnce) {
  // a = 0.7 exp(x) + 0.3 is one loop, with the exponential fused into it.
  // The row sums s are a tree reduction, whose reduce-window reads a from
  // memory, and r reads a at its own elements, so XLA writes a and copies
  // its loop into r's. The exponential is then read by two loops and is
  // written once too. XLA: temp 397,944 (a and the exponential); the model
  // had only a (205,360).
  const MemoryPrediction p = PredictMemory(R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[266,187]{1,0} parameter(0)
  w = f32[187,8]{1,0} parameter(1)
  ex = f32[266,187]{1,0} exponential(x)
  k = f32[] constant(0.7)
  kb = f32[266,187]{1,0} broadcast(k), dimensions={}
  scaled = f32[266,187]{1,0} multiply(kb, ex)
  h = f32[] constant(0.3)
  hb = f32[266,187]{1,0} broadcast(h), dimensions={}
  a = f32[266,187]{1,0} add(scaled, hb)
  zero = f32[] constant(0)
  s = f32[266]{0} reduce(a, zero), dimensions={1}, to_apply=sum
  sb = f32[266,187]{1,0} broadcast(s), dimensions={0}
  r = f32[266,187]{1,0} multiply(a, sb)
  ROOT d = f32[266,8]{1,0} dot(r, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_GE(p.temp_bytes, 397944);
  EXPECT_LE(p.temp_bytes, 1.05 * 397944);
}

}  // namespace
