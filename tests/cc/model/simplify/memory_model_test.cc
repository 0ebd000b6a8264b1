// The memory model's predictions that XLA's simplification decides
// (cc/model/simplify/): loops of one trip, inlined calls, cheap conditionals,
// folded literals and tuple reads, shrunk sorts, merged expressions. The
// passes' own tests are beside this file; here, what they change in the
// figures. Each module is small enough to count its bytes by hand.
#include <cstdint>
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

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

TEST(MemoryModel, IotaLiteralIsComputedNotKept) {
  // A band mask's indices (TensorFlow's MatrixBandPart): XLA folds the
  // reshape of the column literal into {0, 1, ..., 63}, which its
  // simplifier makes an iota, fused into the add. The executable keeps no
  // literal (XLA: 0 bytes of constants, against 256 for the literal).
  std::string column;
  for (int i = 0; i < 64; ++i) column += (i ? ", {" : "{") + std::to_string(i) + "}";
  const MemoryPrediction p = PredictMemory(R"(HloModule m

ENTRY e {
  x = s32[64,64]{1,0} parameter(0)
  c = s32[64,1]{1,0} constant({)" + column + R"(})
  v = s32[64]{0} reshape(c)
  b = s32[64,64]{1,0} broadcast(v), dimensions={1}
  ROOT r = s32[64,64]{1,0} add(x, b)
}
)");
  EXPECT_EQ(p.constant_bytes, 0);
  EXPECT_EQ(p.temp_bytes, 0);
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

TEST(MemoryModel, LoopSimplifierDropsElementsThatFeedOnlyThemselves) {
  // The loop takes the sine of a 64 KiB matrix on each trip, which nothing
  // reads after it or for anything else: XLA's while loop simplifier drops
  // it from the state, and with it the copy of y the loop would write over
  // and the sine's buffer. XLA (jaxlib 0.7.1) plans 67,725 bytes: the
  // arguments (1 KiB + 64 KiB), the 1 KiB result, 129 bytes of counters
  // and tables and 12 of literals. Kept, the matrix would cost the copy of
  // y besides (65,688 bytes of temporaries).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  p = (s32[], f32[256]{0}, f32[256,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[256]{0} get-tuple-element(p), index=1
  d = f32[256,64]{1,0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[256]{0} exponential(a)
  s = f32[256,64]{1,0} sine(d)
  ROOT t = (s32[], f32[256]{0}, f32[256,64]{1,0}) tuple(i1, e, s)
}

cond {
  p = (s32[], f32[256]{0}, f32[256,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[256]{0} parameter(0)
  y = f32[256,64]{1,0} parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[256]{0}, f32[256,64]{1,0}) tuple(zero, x, y)
  w = (s32[], f32[256]{0}, f32[256,64]{1,0}) while(t), condition=cond, body=body
  ROOT r = f32[256]{0} get-tuple-element(w), index=1
}
)"));
  const int64_t xla = 67725;
  EXPECT_LE(p.temp_bytes, 256);
  EXPECT_GE(p.peak_bytes(), xla);
  EXPECT_LE(p.peak_bytes(), xla + 128);
}

TEST(MemoryModel, TopKWhoseValuesAloneAreReadSortsItsKeysInPlace) {
  // XLA has no f64 top-k kernel: it sorts the 128 KiB product in place,
  // without an iota of indices since nothing reads them (the read `i` is
  // dead), and the exponential reads the slice of the first 4 columns and
  // writes the result. XLA (jaxlib 0.7.1) plans 131,072 bytes of
  // temporaries: the product alone.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  x = f64[64,256]{1,0} parameter(0)
  y = f64[256,256]{1,0} parameter(1)
  d = f64[64,256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = (f64[64,4]{1,0}, s32[64,4]{1,0}) topk(d), k=4, largest=true
  i = s32[64,4]{1,0} get-tuple-element(t), index=1
  v = f64[64,4]{1,0} get-tuple-element(t), index=0
  ROOT r = f64[64,4]{1,0} exponential(v)
}
)"));
  EXPECT_EQ(p.temp_bytes, 131072);
  EXPECT_EQ(p.peak_bytes(), 788480);
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

TEST(MemoryModel, MeanOfRowSumsIsOneTreeReductionThatStoresItsInput) {
  // The mean of the squared distances sums the row sums r again. XLA's
  // simplifier folds that into one reduction of the 100 x 50 x 3 squares,
  // long enough for XLA CPU's tree reduction, whose reduce-window reads
  // them from memory: 60,000 bytes of temporaries (XLA's buffer
  // assignment: 60,000 of 81,804). The row sums themselves are fused into
  // the division that reads them.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[100,3]{1,0} parameter(0)
  y = f32[50,3]{1,0} parameter(1)
  bx = f32[100,50,3]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[100,50,3]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[100,50,3]{2,1,0} subtract(bx, by)
  sq = f32[100,50,3]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  r = f32[100,50]{1,0} reduce(sq, zero), dimensions={2}, to_apply=add
  total = f32[] reduce(r, zero), dimensions={0,1}, to_apply=add
  t = f32[100,50]{1,0} broadcast(total), dimensions={}
  ROOT q = f32[100,50]{1,0} divide(r, t)
}
)"));
  const int64_t squares = 100 * 50 * 3 * 4;
  EXPECT_GE(p.temp_bytes, squares);
  EXPECT_LT(p.temp_bytes, squares + 1024);
}

TEST(MemoryModel, SumOfTransposedRowSumsIsOneTreeReductionThatStoresItsInput) {
  // As above, but the total sums the row sums through a transpose. XLA's
  // simplifier folds the transpose into the scalar reduction (it reads the
  // same elements in any order), and then the reduction of the row sums
  // into one of the 100 x 50 x 3 squares, which the tree reduction's
  // reduce-window reads from memory: 60,000 bytes of temporaries (XLA's
  // buffer assignment: 60,000 of 81,804). Left unfolded, the total would
  // read the 20,000 bytes of the transposed row sums instead.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[100,3]{1,0} parameter(0)
  y = f32[50,3]{1,0} parameter(1)
  bx = f32[100,50,3]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[100,50,3]{2,1,0} broadcast(y), dimensions={1,2}
  d = f32[100,50,3]{2,1,0} subtract(bx, by)
  sq = f32[100,50,3]{2,1,0} multiply(d, d)
  zero = f32[] constant(0)
  r = f32[100,50]{1,0} reduce(sq, zero), dimensions={2}, to_apply=add
  t = f32[50,100]{1,0} transpose(r), dimensions={1,0}
  total = f32[] reduce(t, zero), dimensions={0,1}, to_apply=add
  b = f32[50,100]{1,0} broadcast(total), dimensions={}
  ROOT q = f32[50,100]{1,0} divide(t, b)
}
)"));
  const int64_t squares = 100 * 50 * 3 * 4;
  EXPECT_GE(p.temp_bytes, squares);
  EXPECT_LT(p.temp_bytes, squares + 1024);
}

TEST(MemoryModel, DivisionByALiteralFusesIntoItsBroadcast) {
  // w = v / 100 is a multiply by 0.01 once XLA's simplifier has run: cheap,
  // so it fuses into the broadcast bw, which is then written out as the
  // dot's operand while d is still alive (the tree reduction of its rows
  // runs later): 2 x 80,000 bytes plus the 3,200 bytes of partial sums
  // (XLA's buffer assignment: 163,200). Were the division expensive, it
  // would be a step of its own and bw would come after d died.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[200,4]{1,0} parameter(0)
  y = f32[100,4]{1,0} parameter(1)
  v = f32[200]{0} parameter(2)
  d = f32[200,100]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  zero = f32[] constant(0)
  s = f32[200]{0} reduce(d, zero), dimensions={1}, to_apply=add
  n = f32[] constant(100)
  bn = f32[200]{0} broadcast(n), dimensions={}
  m = f32[200]{0} divide(s, bn)
  w = f32[200]{0} divide(v, bn)
  bw = f32[200,100]{1,0} broadcast(w), dimensions={0}
  p = f32[200,4]{1,0} dot(bw, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[200]{0}, f32[200,4]{1,0}) tuple(m, p)
}
)"));
  EXPECT_EQ(p.temp_bytes, 2 * 80000 + 3200);
}

TEST(MemoryModel, ReduceOfAConcatenationReducesEachPart) {
  // The sum over the 320 columns of c = [exp(x), exp(y)] is, after XLA's
  // simplifier, the sum of the two halves' sums: c is never built. Each
  // half is a 40,960-byte tree reduction input (both written before
  // either reduce-window runs) with 1,280 bytes of partial sums; XLA's
  // buffer assignment: 83,200 bytes of temporaries. Unsplit, the 320-wide
  // concatenation would be a copy loop of its own, stored beside them.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[64,160]{1,0} parameter(0)
  y = f32[64,160]{1,0} parameter(1)
  a = f32[64,160]{1,0} exponential(x)
  b = f32[64,160]{1,0} exponential(y)
  c = f32[64,320]{1,0} concatenate(a, b), dimensions={1}
  zero = f32[] constant(0)
  ROOT s = f32[64]{0} reduce(c, zero), dimensions={1}, to_apply=add
}
)"));
  EXPECT_EQ(p.temp_bytes, 83200);
}

TEST(MemoryModel, SumOfANegationReadsTheArrayItself) {
  // XLA sums a and not -a (then negates the 64 sums): a is the one
  // 40,960-byte array stored, the input of both tree reductions, each with
  // 1,280 bytes of partial sums. XLA's buffer assignment: 43,520 (both
  // partial sums at once; the model places each at its reduction's step).
  // Summed as written, -a would be stored beside a.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[64,160]{1,0} parameter(0)
  a = f32[64,160]{1,0} exponential(x)
  n = f32[64,160]{1,0} negate(a)
  zero = f32[] constant(0)
  s = f32[64]{0} reduce(n, zero), dimensions={1}, to_apply=add
  m = f32[160]{0} reduce(a, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[64]{0}, f32[160]{0}) tuple(s, m)
}
)"));
  EXPECT_GE(p.temp_bytes, 40960 + 1280);
  EXPECT_LE(p.temp_bytes, 43520);
}

TEST(MemoryModel, PadReadByAReduceWindowIsNeverWritten) {
  // XLA's simplifier folds the pad into the sum's window (its edges the
  // window's padding, its interior a base dilation): the reduce-window reads
  // a, the one 16,384-byte temporary. XLA's buffer assignment: 16,384. Left
  // as written, exp(a) would be fused into the pad, a 66,564-byte array.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}

ENTRY e {
  x = f32[64,64]{1,0} parameter(0)
  a = f32[64,64]{1,0} exponential(x)
  zero = f32[] constant(0)
  p = f32[129,129]{1,0} pad(a, zero), padding=1_1_1x1_1_1
  ROOT r = f32[128,128]{1,0} reduce-window(p, zero), window={size=2x2}, to_apply=add
}
)"));
  EXPECT_EQ(p.temp_bytes, 16384);
}

TEST(MemoryModel, TransposesThatUndoEachOtherLeaveTheLoopInPlace) {
  // XLA's simplifier merges t2 of t1 into one transpose, the identity, and
  // removes it: r reads d elementwise and writes over it, in the result's
  // allocation. XLA's buffer assignment: 393,216 in all, no temporary.
  // Read as two transposes, r could not write over d (262,144 more).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[256,64]{1,0} parameter(0)
  b = f32[64,256]{1,0} parameter(1)
  d = f32[256,256]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t1 = f32[256,256]{0,1} transpose(d), dimensions={1,0}
  t2 = f32[256,256]{1,0} transpose(t1), dimensions={1,0}
  ROOT r = f32[256,256]{1,0} exponential(t2)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 393216);
}

// A loop of 3 trips that adds its second state element, read only, into
// its first, from zeros; `entry` (the ENTRY's lines) builds the state `t`
// from the parameter x and reads the loop `w`. `add` is there for reduces.
std::string AccumulatingLoop(const std::string& entry) {
  return R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  s = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[1024]{0} get-tuple-element(s), index=1
  x = f32[1024]{0} get-tuple-element(s), index=2
  m = f32[1024]{0} add(acc, x)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(n, m, x)
}

cond {
  s = (s32[], f32[1024]{0}, f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT
}

ENTRY e {
  x = f32[1024]{0} parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  acc = f32[1024]{0} broadcast(z), dimensions={}
)" + entry + "}\n";
}

TEST(MemoryModel, LoopReadsAParameterThroughABroadcastThatAddsNoElements) {
  // q is x under a reshape, a broadcast to the same shape and a reshape
  // back (what JAX lowers x[:, None, :] - y to before exla splits the
  // difference into a loop). XLA makes the broadcast a reshape, so the loop
  // reads x's own buffer: its 4 KiB state element is x, never copied. XLA
  // plans 8337 bytes: x, the result, 129 of counter and tables, 16 of
  // literals. As a broadcast, q would be a 4 KiB buffer of its own.
  const MemoryPrediction p = PredictMemory(AccumulatingLoop(R"(  r = f32[1024,1]{1,0} reshape(x)
  b = f32[1024,1]{1,0} broadcast(r), dimensions={0,1}
  q = f32[1024]{0} reshape(b)
  t = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(zero, acc, q)
  w = (s32[], f32[1024]{0}, f32[1024]{0}) while(t), condition=cond, body=body
  ROOT g = f32[1024]{0} get-tuple-element(w), index=1
)"));
  EXPECT_EQ(p.argument_bytes + p.output_bytes, 2 * 4096);
  // The counter and the tables (XLA packs them into 129 bytes).
  EXPECT_EQ(p.temp_bytes, 152);
  EXPECT_EQ(p.peak_bytes(), 8360);
}

TEST(MemoryModel, ResultThatSumsADimensionOfOneOfALoopsStateIsThatState) {
  // The entry sums g, the loop's accumulator, over a dimension of size 1:
  // each element as it is. XLA makes the reduce a reshape, so the loop
  // accumulates in the result's own buffer, and plans the same 8337 bytes
  // as for the loop above. As a reduce, its result would be a buffer
  // beside the loop's.
  const MemoryPrediction p = PredictMemory(AccumulatingLoop(R"(  t = (s32[], f32[1024]{0}, f32[1024]{0}) tuple(zero, acc, x)
  w = (s32[], f32[1024]{0}, f32[1024]{0}) while(t), condition=cond, body=body
  g = f32[1024]{0} get-tuple-element(w), index=1
  r = f32[1024,1]{1,0} reshape(g)
  ROOT s = f32[1024]{0} reduce(r, z), dimensions={1}, to_apply=add
)"));
  EXPECT_EQ(p.argument_bytes + p.output_bytes, 2 * 4096);
  EXPECT_EQ(p.temp_bytes, 152);
  EXPECT_EQ(p.peak_bytes(), 8360);
}

TEST(MemoryModel, TransposedProductIsWrittenWhereItsReaderWritesInPlace) {
  // XLA computes t as the product b a^T: the dot writes the 32 KiB result
  // and the multiply overwrites it in place. XLA plans 35840 bytes: a, b
  // and the result. As a transpose of d, the multiply could not overwrite
  // what it reads through a permutation, and d would be a temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[64,4]{1,0} parameter(0)
  b = f32[128,4]{1,0} parameter(1)
  d = f32[64,128]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  t = f32[128,64]{1,0} transpose(d), dimensions={1,0}
  c = f32[] constant(2)
  k = f32[128,64]{1,0} broadcast(c), dimensions={}
  ROOT m = f32[128,64]{1,0} multiply(t, k)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 35840);
}

TEST(MemoryModel, ProductReadThroughAChainOfTransposesIsTheProductSwapped) {
  // TensorFlow's einsum writes an identity transpose between the dot and
  // the transpose that swaps its dimensions. XLA's simplifier merges the
  // two and folds the swap into the dot, whose 32 KiB result the fused
  // tanh, multiply and exponential then overwrite in place. XLA plans
  // 41984 bytes: a, b, v, the result and one 32 KiB temporary. Read through
  // the chain, the loop could not write where it reads and d would be a
  // second temporary.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  a = f32[64,4]{1,0} parameter(0)
  b = f32[128,4]{1,0} parameter(1)
  v = f32[64,8]{1,0} parameter(2)
  d = f32[128,64]{1,0} dot(b, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  i = f32[128,64]{1,0} transpose(d), dimensions={0,1}
  t = f32[64,128]{0,1} transpose(i), dimensions={1,0}
  e = f32[64,128]{0,1} tanh(t)
  c = f32[] constant(2)
  k = f32[64,128]{1,0} broadcast(c), dimensions={}
  m = f32[64,128]{1,0} multiply(k, e)
  x = f32[64,128]{1,0} exponential(m)
  ROOT r = f32[128,8]{1,0} dot(x, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)"));
  EXPECT_EQ(p.temp_bytes, 32768);
  EXPECT_EQ(p.peak_bytes(), 41984);
}

TEST(MemoryModel, TopOneOfOneColumnStoresNothing) {
  // Each row of x has one element: its top 1 is itself, at index 0. XLA
  // writes the exponential and q + 0 into the two results and stores
  // nothing else: 16016 bytes, p, q, the results and their 16-byte table.
  // As a top-k, its values and indices would be buffers of their own.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

ENTRY e {
  p = f32[1000,1]{1,0} parameter(0)
  q = s32[1000,1]{1,0} parameter(1)
  x = f32[1000,1]{1,0} exponential(p)
  t = (f32[1000,1]{1,0}, s32[1000,1]{1,0}) topk(x), k=1, largest=true
  v = f32[1000,1]{1,0} get-tuple-element(t), index=0
  i = s32[1000,1]{1,0} get-tuple-element(t), index=1
  j = s32[1000,1]{1,0} add(i, q)
  ROOT r = (f32[1000,1]{1,0}, s32[1000,1]{1,0}) tuple(v, j)
}
)"));
  EXPECT_EQ(p.temp_bytes, 0);
  EXPECT_EQ(p.peak_bytes(), 16016);
}

TEST(MemoryModel, LoopInvariantWorkRunsBeforeTheLoop) {
  // The body's dot reads only what the loop leaves unchanged (x, w): XLA's
  // while loop invariant code motion computes it, with the broadcast it
  // reads, before the loop. The breadth-first schedule then runs that
  // broadcast beside the entry's own one: two 16 KiB values at once (XLA
  // plans 33,348 temporary bytes). Left in the body, the loop's broadcast
  // would live alone (16,992).
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

body {
  s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  acc = f32[64,2]{1,0} get-tuple-element(s), index=2
  w = f32[2,64]{1,0} get-tuple-element(s), index=3
  b = f32[64,64]{1,0} broadcast(x), dimensions={}
  d = f32[64,2]{1,0} dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  sum = f32[64,2]{1,0} add(acc, d)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) tuple(n, x, sum, w)
}

cond {
  s = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = s32[] constant(6)
  ROOT lt = pred[] compare(i, c), direction=LT
}

ENTRY main {
  x = f32[] parameter(0)
  w = f32[2,64]{1,0} parameter(1)
  y = f32[] parameter(2)
  e = f32[64,64]{1,0} broadcast(y), dimensions={}
  de = f32[64,2]{1,0} dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  zero = s32[] constant(0)
  init = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) tuple(zero, x, de, w)
  loop = (s32[], f32[], f32[64,2]{1,0}, f32[2,64]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[64,2]{1,0} get-tuple-element(loop), index=2
}
)"));
  EXPECT_GE(p.temp_bytes, 2 * 64 * 64 * 4);
  EXPECT_LE(p.temp_bytes, 33348 * 11 / 10);
}

TEST(MemoryModel, SumOfAReshapedTransposeReadsTheSumItTransposes) {
  // t is a transpose by layout only; reshaped to row-major, it would be a
  // copy of 72,912 bytes. XLA's simplifier makes the total a reduce of s
  // (reduce of reshape, then of transpose), and fusion computes s, t and r
  // inside the two loops that read them: XLA plans 136 bytes of temporaries
  // (the total and its reduction's scratch), none of them a matrix.
  const MemoryPrediction p = PredictMemory(std::string(R"(HloModule m

add {
  p = f64[] parameter(0)
  q = f64[] parameter(1)
  ROOT r = f64[] add(p, q)
}

ENTRY e {
  a = f64[147]{0} parameter(0)
  b = f64[62]{0} parameter(1)
  ba = f64[147,62]{1,0} broadcast(a), dimensions={0}
  bb = f64[147,62]{1,0} broadcast(b), dimensions={1}
  s = f64[147,62]{1,0} add(ba, bb)
  t = f64[62,147]{0,1} transpose(s), dimensions={1,0}
  r = f64[31,294]{1,0} reshape(t)
  zero = f64[] constant(0)
  total = f64[] reduce(r, zero), dimensions={0,1}, to_apply=add
  bt = f64[31,294]{1,0} broadcast(total), dimensions={}
  ROOT o = f64[31,294]{1,0} multiply(r, bt)
}
)"));
  EXPECT_EQ(p.temp_bytes, 136);
}

}  // namespace
