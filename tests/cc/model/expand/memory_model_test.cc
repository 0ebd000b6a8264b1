// The memory model's predictions that XLA's expanders decide
// (cc/model/expand/): tree reductions, top-k as a sort, the loops of
// Cholesky, solves and QR, convolutions' layout copies and prologues, bf16
// dots in f32, Philox's key words. Each module is small enough to count its
// bytes by hand.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "model/buffers/memory_model.h"
#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

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

// A softmax over the rows of x's transpose: e = exp(x^T - m), its row sums
// s (400 terms: a tree), and `result` (e / s or a value without e).
std::string SoftmaxOfATranspose(const std::string& result) {
  return R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[400,48]{1,0} parameter(0)
  m = f32[48]{0} parameter(1)
  t = f32[48,400]{1,0} transpose(x), dimensions={1,0}
  bm = f32[48,400]{1,0} broadcast(m), dimensions={0}
  d = f32[48,400]{1,0} subtract(t, bm)
  e = f32[48,400]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[48]{0} reduce(e, zero), dimensions={1}, to_apply=add
  bs = f32[48,400]{1,0} broadcast(s), dimensions={0}
  ROOT q = f32[48,400]{1,0} )" + result + R"(
}
)";
}

TEST(MemoryModel, TreeReductionReadsACopyOfAnInputComputedUntransposed) {
  // XLA's ReshapeMover sinks t below d and e (bm is a broadcast it can
  // transpose for free), up to the reduce-window of the row sums: e is
  // computed in x's order, and the reduce-window reads a transposed copy.
  // The division reads e too, which is too expensive to compute twice: e
  // and the copy are both written, 76,800 bytes the copy, 2,688 the
  // partial sums and the sums (XLA's buffer assignment: temp 79,488; e
  // takes the result's buffer).
  EXPECT_EQ(PredictMemory(SoftmaxOfATranspose("divide(e, bs)")).temp_bytes, 79488);
}

TEST(MemoryModel, TreeReductionOfAnInputReadOnceReadsItsOnlyCopy) {
  // e is read by the tree alone: XLA fuses it into the transposing copy,
  // one buffer (XLA: temp 2,688, the partial sums and the sums).
  EXPECT_EQ(PredictMemory(SoftmaxOfATranspose("add(bs, bm)")).temp_bytes, 2688);
}

// A 3x3 kernel of `channels` input channels and 64 output channels over the
// exponential of a `side` x `side` image.
std::string KernelOverAnImage(int side, int channels) {
  const std::string image = "1," + std::to_string(side) + "," + std::to_string(side);
  const std::string in = "f32[" + image + "," + std::to_string(channels) + "]{3,2,1,0}";
  const std::string out = "f32[" + image + ",64]{3,2,1,0}";
  return "HloModule m\n\nENTRY e {\n  x = " + in + " parameter(0)\n  k = f32[3,3," + std::to_string(channels) +
         ",64]{3,2,1,0} parameter(1)\n  big = " + in + " exponential(x)\n  c = " + out +
         " convolution(big, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n  ROOT r = " + out +
         " negate(c)\n}\n";
}

TEST(MemoryModel, SwappedConvolutionKernelIsReversedEarly) {
  // A 3x3 kernel over a 1x1 image: XLA swaps the operands and writes the
  // reversed kernel to memory (64 KiB) as soon as the kernel exists; the
  // breadth-first schedule runs that before the exponential, so both are
  // alive together.
  const MemoryPrediction p = PredictMemory(KernelOverAnImage(1, 32));
  EXPECT_GE(p.temp_bytes, 3 * 3 * 32 * 64 * 4);
}

TEST(MemoryModel, KernelWindowIsReadFromTheKernelsOwnLabels) {
  // A 3x3 kernel of one input channel over a 2x2 image: its window (9
  // positions, the kernel's 0 and 1 dimensions) covers more than the image's
  // 4, so XLA swaps the operands and writes the reversed kernel (2,304
  // bytes). Labels read one place off would take the kernel's 1 and i
  // dimensions, 3 x 1 positions, and keep the operands.
  const MemoryPrediction p = PredictMemory(KernelOverAnImage(2, 1));
  EXPECT_GE(p.temp_bytes, 3 * 3 * 1 * 64 * 4);
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

TEST(MemoryModel, ExpandedSolveRunsALoop) {
  // XLA expands the solve into a loop that inverts the diagonal blocks:
  // beside the solve's scratch (the accumulator of inverses of a, computed
  // first, the blocks being inverted and their diagonal: 256 + 256 + 32),
  // its counter and condition take a 64-byte slot each of the heap (704
  // bytes once aligned) and its state's table of three pointers an
  // allocation of its own: 728, as XLA.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[8,8]{1,0} parameter(0)
  b = f32[8,4]{1,0} parameter(1)
  ROOT s = f32[8,4]{1,0} triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}
)"));
  EXPECT_EQ(p.temp_bytes, 704 + 3 * 8);
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

}  // namespace
