// The algebraic-rewriter's rule for large structured constants
// (cc/passes/structured_literals.h), one structure per test, each on a short
// module whose constant is above the size the test's threshold sets.
#include <string>

#include "passes/algebraic_rewriter.h"
#include "ir/pattern_matcher.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

namespace m = exla::m;
using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::ModuleRun;
using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::RunPassObject;
using exla_test::SizeOptions;

constexpr char kPass[] = "algebraic-rewriter";

// A threshold of 16 bytes: every constant below has at least 4 values.
const exla::Options kSmall = SizeOptions(16, 0);

// `p + c` for a constant `c` of `shape` written as `literal`.
std::string AddConstant(const std::string& shape, const std::string& literal) {
  return "HloModule m\n\nENTRY main {\n  p = " + shape + " parameter(0)\n  c = " + shape +
         " constant(" + literal + ")\n  ROOT s = " + shape + " add(p, c)\n}\n";
}

// The root `add(p, x)` of the rewritten module, with x bound.
exla::HloInstruction* AddedValue(const ModuleRun& run) {
  exla::HloInstruction* value = nullptr;
  const bool added = exla::Match(run.module->entry()->root(), m::Add(m::Parameter(), m::Op(&value)));
  return added ? value : nullptr;
}

ModuleRun Rewrite(const std::string& text) {
  exla::AlgebraicRewriter rewriter(16);
  return RunPassObject(rewriter, text);
}

// row == column, as the rule compares two iotas.
auto OnDiagonal() { return m::Compare(m::Iota(), m::Iota()); }

TEST(StructuredLiterals, SplatBecomesABroadcastOfItsValue) {
  const ModuleRun run = Rewrite(AddConstant("f32[2,3]", "{ {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5} }"));
  EXPECT_TRUE(run.changed);
  exla::HloInstruction* value = nullptr;
  ASSERT_TRUE(exla::Match(AddedValue(run), m::Broadcast(m::ConstantScalar(&value))));
  EXPECT_EQ(value->payload(), "0.5");
}

TEST(StructuredLiterals, IdentityBecomesASelectOnRowEqualsColumn) {
  const PassRun run = RunPass(kPass, AddConstant("f64[3,3]", "{ {1, 0, 0}, {0, 1, 0}, {0, 0, 1} }"),
                              kSmall);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT: f64[3,3]{1,0} constant
    CHECK-DAG: [[ROW:[a-z0-9.]+]] = s32[3,3]{1,0} iota(), iota_dimension=0
    CHECK-DAG: [[COLUMN:[a-z0-9.]+]] = s32[3,3]{1,0} iota(), iota_dimension=1
    CHECK-DAG: [[EQ:[a-z0-9.]+]] = pred[3,3]{1,0} compare([[ROW]], [[COLUMN]]), direction=EQ
    CHECK-DAG: [[ONE:[a-z0-9.]+]] = f64[] constant(1)
    CHECK-DAG: [[ZERO:[a-z0-9.]+]] = f64[] constant(0)
    CHECK-DAG: [[ONES:[a-z0-9.]+]] = f64[3,3]{1,0} broadcast([[ONE]]), dimensions={}
    CHECK-DAG: [[ZEROS:[a-z0-9.]+]] = f64[3,3]{1,0} broadcast([[ZERO]]), dimensions={}
    CHECK:     select([[EQ]], [[ONES]], [[ZEROS]])
  )"));
}

TEST(StructuredLiterals, ScaledIdentityKeepsTheValueAsPrinted) {
  // GPflow's jitter * I: the new scalar takes the printed text, bit for bit.
  const ModuleRun run = Rewrite(AddConstant(
      "f64[2,2]", "{ {1.0000000000000001e-06, 0}, {0, 1.0000000000000001e-06} }"));
  exla::HloInstruction* jitter = nullptr;
  ASSERT_TRUE(exla::Match(AddedValue(run),
                          m::Select(OnDiagonal(), m::Broadcast(m::ConstantScalar(&jitter)),
                                    m::Broadcast(m::ConstantScalar()))));
  EXPECT_EQ(jitter->payload(), "1.0000000000000001e-06");
}

TEST(StructuredLiterals, VectorOnTheDiagonalIsBroadcastAlongRows) {
  const ModuleRun run = Rewrite(AddConstant("f32[3,3]", "{ {1, 0, 0}, {0, 2, 0}, {0, 0, 3} }"));
  exla::HloInstruction *diagonal = nullptr, *broadcast = nullptr;
  ASSERT_TRUE(exla::Match(AddedValue(run),
                          m::Select(OnDiagonal(), m::Broadcast(m::Constant().Bind(&diagonal)).Bind(&broadcast),
                                    m::Broadcast(m::ConstantScalar()))));
  EXPECT_EQ(diagonal->shape().ToString(false), "f32[3]");
  EXPECT_EQ(diagonal->payload(), "{1, 2, 3}");
  EXPECT_EQ(broadcast->dimensions(), std::vector<int64_t>({0}));
}

TEST(StructuredLiterals, RectangularIdentity) {
  const ModuleRun run = Rewrite(AddConstant("f32[2,3]", "{ {1, 0, 0}, {0, 1, 0} }"));
  EXPECT_TRUE(exla::Match(AddedValue(run), m::Select(OnDiagonal(), m::Broadcast(m::ConstantScalar()),
                                                     m::Broadcast(m::ConstantScalar()))));
}

TEST(StructuredLiterals, EqualRowsAreABroadcastOfOneRow) {
  const ModuleRun run = Rewrite(AddConstant("s32[3,4]", "{ {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4} }"));
  exla::HloInstruction *row = nullptr, *broadcast = nullptr;
  ASSERT_TRUE(exla::Match(AddedValue(run), m::Broadcast(m::Constant().Bind(&row)).Bind(&broadcast)));
  EXPECT_EQ(row->payload(), "{1, 2, 3, 4}");
  EXPECT_EQ(broadcast->dimensions(), std::vector<int64_t>({1}));
}

TEST(StructuredLiterals, EqualMatricesAlongTheFirstDimension) {
  const ModuleRun run = Rewrite(AddConstant(
      "f32[2,2,2]", "{ { /*i0=0*/ {1, 2}, {3, 4} }, { /*i0=1*/ {1, 2}, {3, 4} } }"));
  exla::HloInstruction *matrix = nullptr, *broadcast = nullptr;
  ASSERT_TRUE(exla::Match(AddedValue(run), m::Broadcast(m::Constant().Bind(&matrix)).Bind(&broadcast)));
  EXPECT_EQ(matrix->payload(), "{ {1, 2}, {3, 4} }");
  EXPECT_EQ(broadcast->dimensions(), std::vector<int64_t>({1, 2}));
}

TEST(StructuredLiterals, NearlyDiagonalLiteralStays) {
  const std::string text = AddConstant("f64[3,3]", "{ {1, 0, 0}, {0, 1, 1e-300}, {0, 0, 1} }");
  EXPECT_TRUE(ExpectUnchanged(kPass, text, kSmall));
  EXPECT_TRUE(HasMessage(RunPass(kPass, text, kSmall),
                         "constant c (72 B) left alone: not a splat, diagonal or broadcast"));
}

TEST(StructuredLiterals, SignedZerosAreTwoValues) {
  // -0 and 0 compare equal but are different bits: not a splat.
  EXPECT_TRUE(ExpectUnchanged(kPass, AddConstant("f32[4]", "{0, -0, 0, 0}"), kSmall));
}

TEST(StructuredLiterals, ConstantsBelowTheSizeStay) {
  // Without a threshold, only constants of 1 MiB and more are rebuilt.
  EXPECT_TRUE(ExpectUnchanged(kPass, AddConstant("f32[2,2]", "{ {1, 0}, {0, 1} }")));
}

TEST(StructuredLiterals, ShardedConstantStays) {
  const std::string text =
      "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
      "  c = f32[4] constant({1, 1, 1, 1}), sharding={replicated}\n"
      "  ROOT s = f32[4] add(p, c)\n}\n";
  EXPECT_TRUE(ExpectUnchanged(kPass, text, kSmall));
  EXPECT_TRUE(HasMessage(RunPass(kPass, text, kSmall), "left alone: it carries sharding"));
}

TEST(StructuredLiterals, ConstantWithAnotherLayoutStays) {
  EXPECT_TRUE(ExpectUnchanged(
      kPass, AddConstant("f32[2,2]{0,1}", "{ {1, 0}, {0, 1} }"), kSmall));
}

}  // namespace
