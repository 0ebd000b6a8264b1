// The pattern matcher (cc/ir/pattern_matcher.h): opcodes, operands,
// bindings, predicates, either-order matching and looking through no-ops.
#include "ir/pattern_matcher.h"

#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloInstruction;
using exla::Match;
namespace m = exla::m;

constexpr char kModule[] = R"(HloModule m

ENTRY main {
  x = f32[4,8]{1,0} parameter(0)
  s = f32[] parameter(1)
  two = f32[] constant(2)
  b = f32[4,8]{1,0} broadcast(s), dimensions={}
  scaled = f32[4,8]{1,0} multiply(x, b)
  swapped = f32[4,8]{1,0} multiply(b, x)
  square = f32[4,8]{1,0} multiply(x, x)
  wide = f64[4,8]{1,0} convert(scaled)
  same = f64[4,8]{1,0} reshape(wide)
  ident = f64[4,8]{1,0} transpose(same), dimensions={0,1}
  flipped = f64[8,4]{1,0} transpose(same), dimensions={1,0}
  narrow = f32[4,8]{1,0} convert(wide)
  ROOT t = (f64[4,8]{1,0}, f64[8,4]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(ident, flipped, narrow, swapped, square)
}
)";

// The parsed module and a lookup by instruction name.
class Module {
 public:
  Module() : module_(exla::ParseHloModule(kModule)) {}
  HloInstruction* operator[](const std::string& name) const {
    HloInstruction* h = module_->entry()->FindInstruction(name);
    if (h == nullptr) throw std::invalid_argument("no instruction " + name);
    return h;
  }

 private:
  std::unique_ptr<exla::HloModule> module_;
};

TEST(PatternMatcher, OpcodeAndOperands) {
  Module mod;
  EXPECT_TRUE(Match(mod["scaled"], m::Multiply(m::Parameter(), m::Broadcast())));
  EXPECT_TRUE(Match(mod["scaled"], m::Multiply()));  // no operand patterns: any operands
  EXPECT_FALSE(Match(mod["scaled"], m::Add()));
  // Operand order matters for Multiply, not for MultiplyAnyOrder.
  EXPECT_FALSE(Match(mod["swapped"], m::Multiply(m::Parameter(), m::Broadcast())));
  EXPECT_TRUE(Match(mod["swapped"], m::MultiplyAnyOrder(m::Parameter(), m::Broadcast())));
  // A pattern with operands requires exactly that many.
  EXPECT_FALSE(Match(mod["scaled"], m::Multiply(m::Op())));
}

TEST(PatternMatcher, BindsOperands) {
  Module mod;
  HloInstruction *value = nullptr, *scalar = nullptr, *broadcast = nullptr;
  ASSERT_TRUE(Match(mod["swapped"], m::MultiplyAnyOrder(
                                        m::Op(&value).WithRank(2),
                                        m::Broadcast(m::Op(&scalar)).Bind(&broadcast))));
  EXPECT_EQ(value, mod["x"]);
  EXPECT_EQ(scalar, mod["s"]);
  EXPECT_EQ(broadcast, mod["b"]);
}

TEST(PatternMatcher, ShapePredicates) {
  Module mod;
  EXPECT_TRUE(Match(mod["two"], m::ConstantScalar()));
  EXPECT_FALSE(Match(mod["x"], m::Op().IsScalar()));
  EXPECT_TRUE(Match(mod["x"], m::Parameter().WithRank(2).WithElementType(exla::PrimitiveType::kF32)));
  EXPECT_FALSE(Match(mod["wide"], m::Op().WithElementType(exla::PrimitiveType::kF32)));
  EXPECT_FALSE(Match(mod["t"], m::Op().IsArray()));
  // b is used by scaled and swapped; scaled only by wide.
  EXPECT_FALSE(Match(mod["b"], m::Op().WithOneUser()));
  EXPECT_TRUE(Match(mod["scaled"], m::Op().WithOneUser()));
}

TEST(PatternMatcher, SameOperandTwice) {
  Module mod;
  HloInstruction *a = nullptr, *b = nullptr;
  ASSERT_TRUE(Match(mod["square"], m::Multiply(m::Op(&a), m::Op(&b))));
  EXPECT_EQ(a, b);
  ASSERT_TRUE(Match(mod["scaled"], m::Multiply(m::Op(&a), m::Op(&b))));
  EXPECT_NE(a, b);
}

TEST(PatternMatcher, NoOpsLooksThroughValuePreservingInstructions) {
  Module mod;
  // ident -> same (reshape to the same dims) -> wide (f32 -> f64) -> scaled.
  std::vector<HloInstruction*> skipped;
  HloInstruction* product = nullptr;
  ASSERT_TRUE(Match(mod["ident"], m::NoOps(m::Multiply().Bind(&product), &skipped)));
  EXPECT_EQ(product, mod["scaled"]);
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0], mod["ident"]);
  EXPECT_EQ(skipped[1], mod["same"]);
  EXPECT_EQ(skipped[2], mod["wide"]);
}

TEST(PatternMatcher, NoOpsStopsAtValueChangingInstructions) {
  Module mod;
  // A real transpose moves values; a narrowing convert rounds them.
  EXPECT_FALSE(Match(mod["flipped"], m::NoOps(m::Multiply())));
  EXPECT_FALSE(Match(mod["narrow"], m::NoOps(m::Multiply())));
  EXPECT_TRUE(m::IsNoOp(mod["ident"]));
  EXPECT_FALSE(m::IsNoOp(mod["flipped"]));
  EXPECT_FALSE(m::IsNoOp(mod["narrow"]));
  EXPECT_TRUE(m::IsNoOp(mod["wide"]));
}

TEST(PatternMatcher, AnyOfTriesBothAlternatives) {
  Module mod;
  HloInstruction* inner = nullptr;
  auto negate_or_broadcast = m::AnyOf(m::Negate(m::Op(&inner)), m::Broadcast(m::Op(&inner)));
  ASSERT_TRUE(Match(mod["b"], negate_or_broadcast));
  EXPECT_EQ(inner, mod["s"]);
  EXPECT_FALSE(Match(mod["x"], negate_or_broadcast));
}

TEST(PatternMatcher, CustomPredicate) {
  Module mod;
  auto has_dims = [](std::vector<int64_t> dims) {
    return m::Transpose().WithPredicate(
        [dims](const HloInstruction* h) { return h->dimensions() == dims; });
  };
  EXPECT_TRUE(Match(mod["flipped"], has_dims({1, 0})));
  EXPECT_FALSE(Match(mod["ident"], has_dims({1, 0})));
}

constexpr char kSplats[] = R"(HloModule splats

ENTRY main {
  half = f32[] constant(1.5)
  wrapped = f32[1,1]{1,0} constant({ {2} })
  nested = f32[1]{0} reshape(half)
  spread = f32[4,8]{1,0} broadcast(nested), dimensions={1}
  whole = s32[4,8]{1,0} convert(spread)
  truth = pred[] convert(half)
  wide = f32[4,8]{1,0} broadcast(wrapped), dimensions={0,1}
  yes = pred[] constant(true)
  many = f32[2]{0} constant({1, 1})
  ROOT t = (s32[4,8]{1,0}, pred[], f32[4,8]{1,0}, pred[], f32[2]{0}) tuple(whole, truth, wide, yes, many)
}
)";

// One helper reads scalar literals for the rewriter and the memory model's
// CSE: through reshapes, broadcasts of any one-element operand and converts
// (which change the value as XLA would), in a literal of any rank.
TEST(SplatConstantValue, ReadsOneElementLiterals) {
  std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kSplats);
  auto value = [&](const std::string& name) {
    return exla::SplatConstantValue(module->entry()->FindInstruction(name));
  };
  EXPECT_TRUE(value("half") == 1.5);
  EXPECT_TRUE(value("spread") == 1.5);
  EXPECT_TRUE(value("whole") == 1.0);  // truncated by the convert to s32
  EXPECT_TRUE(value("truth") == 1.0);
  EXPECT_TRUE(value("wrapped") == 2.0);
  EXPECT_TRUE(value("wide") == 2.0);
  EXPECT_FALSE(value("yes").has_value());   // not a number
  EXPECT_FALSE(value("many").has_value());  // two elements
}

}  // namespace
