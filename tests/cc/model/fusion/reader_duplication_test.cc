// XLA's fusion copying a cheap producer into each reader that can compute
// it (cc/model/fusion/reader_duplication.h).
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "model/fusion/reader_duplication.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::DuplicatedIntoReader;

// `producer` (over d, a GEMM's result, and `second`) is read by a tree
// reduction, which cannot take it into its loop, and by an elementwise add.
std::string TwoReaders(const std::string& producer, const std::string& second) {
  return R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  a = f32[256,8]{1,0} parameter(0)
  b = f32[8,64]{1,0} parameter(1)
  v = f32[256]{0} parameter(2)
  w = f32[256,64]{1,0} parameter(3)
  d = f32[256,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bv = f32[256,64]{1,0} broadcast(v), dimensions={0}
  m = f32[256,64]{1,0} )" + producer + "(d, " + second + R"()
  zero = f32[] constant(0)
  s = f32[256]{0} reduce(m, zero), dimensions={1}, to_apply=add
  bs = f32[256,64]{1,0} broadcast(s), dimensions={0}
  ROOT r = f32[256,64]{1,0} add(m, bs)
}
)";
}

struct Readers {
  std::unique_ptr<exla::HloModule> module;
  const exla::HloInstruction* m = nullptr;
  const exla::HloInstruction* tree = nullptr;  // s, the tree reduction
  const exla::HloInstruction* loop = nullptr;  // r, the elementwise add
};

Readers Parse(const std::string& text) {
  Readers r;
  r.module = exla::ParseHloModule(text);
  const exla::HloComputation* entry = r.module->entry();
  r.m = entry->FindInstruction("m");
  r.tree = entry->FindInstruction("s");
  r.loop = entry->FindInstruction("r");
  return r;
}

TEST(ReaderDuplication, CheapProducerIsCopiedIntoTheLoopThatCanTakeIt) {
  const Readers r = Parse(TwoReaders("multiply", "bv"));
  EXPECT_TRUE(DuplicatedIntoReader(*r.m, *r.loop));
}

TEST(ReaderDuplication, TreeReductionReadsTheBuffer) {
  // Its reduce-window reads the producer from memory.
  const Readers r = Parse(TwoReaders("multiply", "bv"));
  EXPECT_FALSE(DuplicatedIntoReader(*r.m, *r.tree));
}

TEST(ReaderDuplication, ExpensiveProducerIsNotCopied) {
  const Readers r = Parse(TwoReaders("divide", "bv"));
  EXPECT_FALSE(DuplicatedIntoReader(*r.m, *r.loop));
}

TEST(ReaderDuplication, ProducerOfTwoLargeOperandsIsNotCopied) {
  // Copying it would read d and w once per reader: XLA keeps one buffer.
  const Readers r = Parse(TwoReaders("multiply", "w"));
  EXPECT_FALSE(DuplicatedIntoReader(*r.m, *r.loop));
}

TEST(ReaderDuplication, ScalarProducerKeepsItsOneBuffer) {
  // A copy of n would move only scalars' lifetimes: the model keeps n's
  // buffer for both readers.
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(R"(HloModule m

ENTRY e {
  i = f32[] parameter(0)
  one = f32[] constant(1)
  n = f32[] add(i, one)
  t = f32[] multiply(n, i)
  ROOT r = (f32[], f32[]) tuple(n, t)
}
)");
  const exla::HloComputation* entry = module->entry();
  EXPECT_FALSE(DuplicatedIntoReader(*entry->FindInstruction("n"), *entry->FindInstruction("t")));
}

// m (over d, a GEMM's result), reshaped to a row mr, is read through mr
// by a tree reduction and by a loop.
constexpr char kReshapedProducer[] = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  a = f32[256,8]{1,0} parameter(0)
  b = f32[8,64]{1,0} parameter(1)
  d = f32[256,64]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  m = f32[256,64]{1,0} negate(d)
  mr = f32[16384]{0} reshape(m)
  zero = f32[] constant(0)
  s = f32[] reduce(mr, zero), dimensions={0}, to_apply=add
  bs = f32[16384]{0} broadcast(s), dimensions={}
  ROOT r = f32[16384]{0} multiply(mr, bs)
}
)";

TEST(ReaderDuplication, ProducerIsCopiedThroughTheReshapeThatViewsIt) {
  // m's one user is the reshape; its readers are the reshape's two.
  auto module = exla::ParseHloModule(kReshapedProducer);
  const exla::HloComputation* entry = module->entry();
  const exla::HloInstruction* mr = entry->FindInstruction("mr");
  EXPECT_TRUE(DuplicatedIntoReader(*mr, *entry->FindInstruction("r")));
  EXPECT_FALSE(DuplicatedIntoReader(*mr, *entry->FindInstruction("s")));
}

// An outer product (a dot over one contracted dimension of size 1) read by
// a tree reduction and by an elementwise compare, as a softmax's argmax
// mask reads it.
constexpr char kOuterProduct[] = R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

ENTRY e {
  x = f32[256,1]{1,0} parameter(0)
  y = f32[256,1]{1,0} parameter(1)
  o = f32[256,256]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ninf = f32[] constant(-inf)
  mx = f32[256]{0} reduce(o, ninf), dimensions={1}, to_apply=max
  b = f32[256,256]{1,0} broadcast(mx), dimensions={0}
  ROOT eq = pred[256,256]{1,0} compare(o, b), direction=EQ
}
)";

TEST(ReaderDuplication, OuterProductIsCopiedIntoTheLoopThatCanTakeIt) {
  // XLA's simplifier has made it a multiply of two broadcasts before fusion.
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kOuterProduct);
  const exla::HloComputation* entry = module->entry();
  EXPECT_TRUE(DuplicatedIntoReader(*entry->FindInstruction("o"), *entry->FindInstruction("eq")));
  EXPECT_FALSE(DuplicatedIntoReader(*entry->FindInstruction("o"), *entry->FindInstruction("mx")));
}

// t, a transpose, is read by a reduce-window (which reads buffers only) and
// by the multiply's loop.
constexpr char kTransposeReadByAWindowAndALoop[] = R"(HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}

ENTRY e {
  x = f32[256,128]{1,0} parameter(0)
  t = f32[128,256]{1,0} transpose(x), dimensions={1,0}
  zero = f32[] constant(0)
  w = f32[128,256]{1,0} reduce-window(t, zero), window={size=1x3 pad=0_0x1_1}, to_apply=add
  m = f32[128,256]{1,0} multiply(t, w)
  ROOT o = f64[128,256]{1,0} convert(m)
}
)";

TEST(ReaderDuplication, TransposeIsCopiedIntoTheLoopThatCanTakeIt) {
  // XLA writes t for the reduce-window and computes it again from x inside
  // the multiply's loop (copy_multiply_fusion reads x): t dies before the
  // f64 result is written and takes its allocation, so XLA plans only w
  // (131,072 bytes), where a t read by both would add 131,072 more.
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kTransposeReadByAWindowAndALoop);
  const exla::HloComputation* entry = module->entry();
  EXPECT_TRUE(DuplicatedIntoReader(*entry->FindInstruction("t"), *entry->FindInstruction("m")));
  EXPECT_FALSE(DuplicatedIntoReader(*entry->FindInstruction("t"), *entry->FindInstruction("w")));
}

}  // namespace
