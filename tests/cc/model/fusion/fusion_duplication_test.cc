// Where XLA's fusion stops folding a producer into its readers' loops
// (cc/model/fusion/fusion_duplication.h): here, a value whose emitted code
// keeps no cache (a reduction, a concatenation) with more than one reader
// or emitted twice by one loop. Each figure is
// XLA's buffer assignment (jaxlib 0.7.1) of the same module.
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

// r = `producer`, and h = 0.5 * r, both read by the concatenation c (one
// element of the entry's tuple, so that c's loop is not the entry's root).
// `r_read` is what h and c read of r: r itself or its conversion to f32.
std::string ValueConcatenatedWithItsHalf(const std::string& producer, const std::string& r_read = "r") {
  return R"(HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  x = f32[64,32,8]{2,1,0} parameter(0)
  y = f32[64,32]{1,0} parameter(1)
  zero = f32[] constant(0)
  r = f32[64,32]{1,0} )" + producer + "\n" +
         (r_read == "r" ? "" : "  " + r_read + " = f32[64,32]{1,0} convert(r)\n") + R"(  half = f32[] constant(0.5)
  b = f32[64,32]{1,0} broadcast(half), dimensions={}
  h = f32[64,32]{1,0} multiply()" + r_read + R"(, b)
  c = f32[128,32]{1,0} concatenate()" + r_read + R"(, h), dimensions={0}
  ROOT t = (f32[128,32]{1,0}) tuple(c)
}
)";
}

const char kSum[] = "reduce(x, zero), dimensions={2}, to_apply=sum";

TEST(FusionDuplication, SumWithTwoReadersInOneLoopIsWrittenOut) {
  // c and h both read r: XLA does not fold a reduction into a loop where
  // more than one instruction reads it (the loop would sum again at each
  // read), so r is written out (8,192 bytes; buffer assignment: temp 8,192).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf(kSum)).temp_bytes, 8192);
}

TEST(FusionDuplication, ReadersAreCountedThroughAConversionToItsOwnType) {
  // As above, read through rc = convert(r) to f32, which XLA's simplifier
  // removes: r still has two readers (buffer assignment: temp 8,192).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf(kSum, "rc")).temp_bytes, 8192);
}

TEST(FusionDuplication, ExponentialWithTwoReadersInOneLoopIsFused) {
  // An exponential keeps the elements it computed: XLA folds it into the
  // loop although two instructions read it (buffer assignment: temp 0).
  EXPECT_EQ(PredictMemory(ValueConcatenatedWithItsHalf("exponential(y)")).temp_bytes, 0);
}

// A module whose concatenation c (128 KiB) joins a dot's result a (64 KiB)
// and half of it, read by `readers` (instructions of the entry, the last
// one its root).
std::string ConcatenationOfADot(const std::string& readers) {
  return R"(HloModule m

ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  q = f32[32,256]{1,0} parameter(1)
  v = f32[256,8]{1,0} parameter(2)
  a = f32[64,256]{1,0} dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  half = f32[] constant(0.5)
  halves = f32[64,256]{1,0} broadcast(half), dimensions={}
  h = f32[64,256]{1,0} multiply(a, halves)
  c = f32[128,256]{1,0} concatenate(a, h), dimensions={0}
)" + readers + "}\n";
}

// r = the sums of x's rows of 3, read through its transpose t by the
// compare c and by the root's `select`.
std::string RowSumsReadThroughATranspose(const std::string& select) {
  return R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[96,256,3]{2,1,0} parameter(0)
  z = f32[] constant(0)
  r = f32[96,256]{1,0} reduce(x, z), dimensions={2}, to_apply=add
  t = f32[256,96]{1,0} transpose(r), dimensions={1,0}
  zb = f32[256,96]{1,0} broadcast(z), dimensions={}
  o = f32[] constant(1)
  ob = f32[256,96]{1,0} broadcast(o), dimensions={}
  c = pred[256,96]{1,0} compare(t, zb), direction=GT
  ROOT s = f32[256,96]{1,0} )" + select + R"(
}
)";
}

TEST(FusionDuplication, SumReadThroughATransposeTwiceIsWrittenOut) {
  // Layout assignment lays t out as a bitcast of r and gives each of its
  // readers (c and the select) a transposing copy of its own: one loop
  // reads r twice, so XLA writes the 98,304 bytes of r out (XLA's buffer
  // assignment: temp 98,304).
  EXPECT_EQ(PredictMemory(RowSumsReadThroughATranspose("select(c, t, zb)")).temp_bytes, 98304);
}

TEST(FusionDuplication, SumReadThroughATransposeOnceIsFused) {
  // t has one reader: the sums are folded into the loop (XLA: temp 0).
  EXPECT_EQ(PredictMemory(RowSumsReadThroughATranspose("select(c, ob, zb)")).temp_bytes, 0);
}

TEST(FusionDuplication, ConcatenationReadByTwoLoopsIsWrittenOut) {
  // m is cheap, so XLA copies it into both loops that read it (the square
  // root and the division), and both would read the concatenation c: XLA
  // writes c (128 KiB) out instead of folding it into two loops. So a
  // (64 KiB) dies at c, and c lives until the division's loop: XLA's temp
  // is c and top (192 KiB), and a goes into s's result allocation.
  const MemoryPrediction p = PredictMemory(ConcatenationOfADot(R"(  k = f32[] constant(0.7)
  ks = f32[128,256]{1,0} broadcast(k), dimensions={}
  m = f32[128,256]{1,0} multiply(c, ks)
  s = f32[128,256]{1,0} sqrt(m)
  t = f32[128,256]{1,0} divide(m, s)
  top = f32[64,256]{1,0} slice(t), slice={[0:64], [0:256]}
  d = f32[64,8]{1,0} dot(top, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[128,256]{1,0}, f32[64,8]{1,0}) tuple(s, d)
)"));
  EXPECT_EQ(p.output_bytes, 133136);
  EXPECT_EQ(p.temp_bytes, 196608);
}

TEST(FusionDuplication, ConcatenationALoopWouldEmitTwiceIsWrittenOut) {
  // One loop reads the concatenation c, through two slices of e: it would
  // emit c at two indices, so XLA writes c out. a dies at c, and c lives
  // until the loop of u: XLA's temp is a and c, then c and u (192 KiB).
  const MemoryPrediction p = PredictMemory(ConcatenationOfADot(R"(  e = f32[128,256]{1,0} exponential(c)
  top = f32[64,256]{1,0} slice(e), slice={[0:64], [0:256]}
  bottom = f32[64,256]{1,0} slice(e), slice={[64:128], [0:256]}
  u = f32[64,256]{1,0} add(top, bottom)
  ROOT d = f32[64,8]{1,0} dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"));
  EXPECT_EQ(p.output_bytes, 2048);
  EXPECT_EQ(p.temp_bytes, 196608);
}

}  // namespace
