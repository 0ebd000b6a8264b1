// The dimension map of the tensor splitter (cc/analysis/dimension_map.h),
// one row per opcode rule: a tiny module, the instruction asked about, the
// queried dimension and the expected mapping. A wrong rule shows up here as
// the rule, not as a numeric mismatch in a split program.
#include "analysis/dimension_map.h"

#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::DimensionMapping;
using exla::HloInstruction;
using exla::HloOpcode;

// A module whose entry is `body` (the instruction asked about is `op`), with
// a scalar add reducer for reduce rows.
std::string ModuleText(const std::string& body) {
  return "HloModule m\n\nadd_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nmax_f32 {\n  a = f32[] parameter(0)\n"
         "  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n\n"
         "sub_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] subtract(a, b)\n}\n\nENTRY main {\n" +
         body + "}\n";
}

struct Module {
  explicit Module(const std::string& body) : module(exla::ParseHloModule(ModuleText(body))) {}
  const HloInstruction& op() const { return *module->entry()->FindInstruction("op"); }
  std::unique_ptr<exla::HloModule> module;
};

const DimensionMapping kUsedWhole = DimensionMapping::UsedWhole();
const DimensionMapping kReducedAway = DimensionMapping::ReducedAway();
const DimensionMapping kNotSplittable = DimensionMapping::NotSplittable();
DimensionMapping Dim(int64_t d) { return DimensionMapping::Dimension(d); }

// OperandDimension(op, dim, operand): which operand dimension result
// dimension `dim` comes from.
struct OperandRow {
  const char* rule;
  const char* body;
  int64_t dim;
  int operand;
  DimensionMapping expected;
};

const std::vector<OperandRow>& OperandRows() {
  static const std::vector<OperandRow> rows = {
      {"elementwise keeps the dimension",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,6] add(x, x)\n", 1, 0, Dim(1)},
      {"elementwise scalar operand is used whole",
       "  lo = f32[] parameter(0)\n  x = f32[4,6] parameter(1)\n"
       "  ROOT op = f32[4,6] clamp(lo, x, x)\n", 0, 0, kUsedWhole},
      {"copy keeps the dimension",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,6] copy(x)\n", 0, 0, Dim(0)},
      {"broadcast maps to the operand dimension",
       "  x = f32[6] parameter(0)\n  ROOT op = f32[4,6] broadcast(x), dimensions={1}\n", 1, 0,
       Dim(0)},
      {"broadcast dimension the operand lacks: used whole",
       "  x = f32[6] parameter(0)\n  ROOT op = f32[4,6] broadcast(x), dimensions={1}\n", 0, 0,
       kUsedWhole},
      {"transpose follows the permutation",
       "  x = f32[4,6,2] parameter(0)\n"
       "  ROOT op = f32[2,4,6] transpose(x), dimensions={2,0,1}\n", 0, 0, Dim(2)},
      {"reshape keeps a dimension with the same prefix",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,2,3] reshape(x)\n", 0, 0, Dim(0)},
      {"reshape that splits the dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,2,3] reshape(x)\n", 1, 0, kNotSplittable},
      {"bitcast is a reshape",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,6,1] bitcast(x)\n", 1, 0, Dim(1)},
      {"reduce: surviving dimensions in order",
       "  x = f32[4,6,8] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,8] reduce(x, z), dimensions={1}, to_apply=add_f32\n", 1, 0, Dim(2)},
      {"reduce: the init value is used whole",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4] reduce(x, z), dimensions={1}, to_apply=add_f32\n", 0, 1, kUsedWhole},
      {"dot: batch dimension",
       "  a = f32[2,4,6] parameter(0)\n  b = f32[2,6,8] parameter(1)\n"
       "  ROOT op = f32[2,4,8] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n", 0, 1, Dim(0)},
      {"dot: lhs free dimension comes from the lhs",
       "  a = f32[4,6] parameter(0)\n  b = f32[6,8] parameter(1)\n"
       "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
       0, 0, Dim(0)},
      {"dot: the rhs is used whole along an lhs free dimension",
       "  a = f32[4,6] parameter(0)\n  b = f32[6,8] parameter(1)\n"
       "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
       0, 1, kUsedWhole},
      {"dot: rhs free dimension comes from the rhs",
       "  a = f32[4,6] parameter(0)\n  b = f32[8,6] parameter(1)\n"
       "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n",
       1, 1, Dim(0)},
      {"slice that keeps the dimension whole",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,3] slice(x), slice={[0:4], [1:4]}\n", 0, 0,
       Dim(0)},
      {"slice that cuts the dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,3] slice(x), slice={[0:4], [1:4]}\n", 1, 0,
       kNotSplittable},
      {"pad without padding along the dimension",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,9] pad(x, z), padding=0_0x1_2\n", 0, 0, Dim(0)},
      {"pad along the dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,9] pad(x, z), padding=0_0x1_2\n", 1, 0, kNotSplittable},
      {"pad: interior padding counts as padding",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[7,6] pad(x, z), padding=0_0_1x0_0\n", 0, 0, kNotSplittable},
      {"pad: the padding value is used whole",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,9] pad(x, z), padding=0_0x1_2\n", 0, 1, kUsedWhole},
      {"concatenate along another dimension",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,12] concatenate(x, x), dimensions={1}\n",
       0, 1, Dim(0)},
      {"concatenate along its own dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,12] concatenate(x, x), dimensions={1}\n",
       1, 0, kNotSplittable},
      {"sort along another dimension",
       "  x = f32[4,6] parameter(0)\n"
       "  ROOT op = f32[4,6] sort(x), dimensions={1}, to_apply=max_f32\n", 0, 0, Dim(0)},
      {"sort along its own dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n"
       "  ROOT op = f32[4,6] sort(x), dimensions={1}, to_apply=max_f32\n", 1, 0, kNotSplittable},
      {"top-k rows are independent",
       "  x = f32[4,6] parameter(0)\n  ROOT op = (f32[4,2], s32[4,2]) topk(x), k=2\n", 0, 0,
       Dim(0)},
      {"top-k along its last dimension: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = (f32[4,2], s32[4,2]) topk(x), k=2\n", 1, 0,
       kNotSplittable},
      {"get-tuple-element keeps the dimension",
       "  x = f32[4,6] parameter(0)\n  t = (f32[4,6]) tuple(x)\n"
       "  ROOT op = f32[4,6] get-tuple-element(t), index=0\n", 1, 0, Dim(1)},
      {"set-dimension-size on another dimension",
       "  x = f32[4,6] parameter(0)\n  n = s32[] constant(3)\n"
       "  ROOT op = f32[4,<=6] set-dimension-size(x, n), dimensions={1}\n", 0, 0, Dim(0)},
      {"set-dimension-size: the size is used whole",
       "  x = f32[4,6] parameter(0)\n  n = s32[] constant(3)\n"
       "  ROOT op = f32[4,<=6] set-dimension-size(x, n), dimensions={1}\n", 0, 1, kUsedWhole},
      {"triangular-solve (left side): columns of b are independent",
       "  a = f32[4,4] parameter(0)\n  b = f32[4,6] parameter(1)\n"
       "  ROOT op = f32[4,6] triangular-solve(a, b), left_side=true, lower=true, "
       "transpose_a=NO_TRANSPOSE\n", 1, 1, Dim(1)},
      {"triangular-solve: the matrix is used whole",
       "  a = f32[4,4] parameter(0)\n  b = f32[4,6] parameter(1)\n"
       "  ROOT op = f32[4,6] triangular-solve(a, b), left_side=true, lower=true, "
       "transpose_a=NO_TRANSPOSE\n", 1, 0, kUsedWhole},
      {"triangular-solve (left side): rows of b are coupled",
       "  a = f32[4,4] parameter(0)\n  b = f32[4,6] parameter(1)\n"
       "  ROOT op = f32[4,6] triangular-solve(a, b), left_side=true, lower=true, "
       "transpose_a=NO_TRANSPOSE\n", 0, 1, kNotSplittable},
      {"an opcode without a rule: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,6] reverse(x), dimensions={1}\n", 0, 0,
       kNotSplittable},
  };
  return rows;
}

TEST(SplitDimensionMap, OperandDimensionRules) {
  for (const OperandRow& row : OperandRows()) {
    Module module(row.body);
    DimensionMapping actual = exla::OperandDimension(module.op(), row.dim, row.operand);
    EXPECT_EQ(actual.ToString(), row.expected.ToString())
        << "rule: " << row.rule << " (result dim " << row.dim << ", operand " << row.operand
        << ")";
  }
}

// ResultDimension(op, operand, dim): which result dimension operand
// dimension `dim` becomes.
struct ResultRow {
  const char* rule;
  const char* body;
  int operand;
  int64_t dim;
  DimensionMapping expected;
};

const std::vector<ResultRow>& ResultRows() {
  static const std::vector<ResultRow> rows = {
      {"reduce: a reduced dimension is reduced away",
       "  x = f32[4,6,8] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,8] reduce(x, z), dimensions={1}, to_apply=add_f32\n", 0, 1,
       kReducedAway},
      {"reduce: a surviving dimension moves down past reduced ones",
       "  x = f32[4,6,8] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4,8] reduce(x, z), dimensions={1}, to_apply=add_f32\n", 0, 2, Dim(1)},
      {"reduce: slicing the init value is not splittable",
       "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
       "  ROOT op = f32[4] reduce(x, z), dimensions={1}, to_apply=add_f32\n", 1, 0,
       kNotSplittable},
      {"dot: a contracting dimension is reduced away",
       "  a = f32[4,6] parameter(0)\n  b = f32[6,8] parameter(1)\n"
       "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
       1, 0, kReducedAway},
      {"dot: batch dimensions come first",
       "  a = f32[4,2,6] parameter(0)\n  b = f32[2,6,8] parameter(1)\n"
       "  ROOT op = f32[2,4,8] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={0}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n", 0, 1, Dim(0)},
      {"dot: rhs free dimensions follow the lhs free ones",
       "  a = f32[4,6] parameter(0)\n  b = f32[6,8] parameter(1)\n"
       "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
       1, 1, Dim(1)},
      {"other opcodes invert the operand rule (transpose)",
       "  x = f32[4,6,2] parameter(0)\n"
       "  ROOT op = f32[2,4,6] transpose(x), dimensions={2,0,1}\n", 0, 1, Dim(2)},
      {"other opcodes: no result dimension comes from it",
       "  x = f32[4,6] parameter(0)\n  ROOT op = f32[4,3] slice(x), slice={[0:4], [1:4]}\n", 0,
       1, kNotSplittable},
      {"a tuple result that is not rows of its operand: not splittable",
       "  x = f32[4,6] parameter(0)\n  ROOT op = (f32[4,6], f32[4,6]) tuple(x, x)\n", 0, 0,
       kNotSplittable},
  };
  return rows;
}

TEST(SplitDimensionMap, ResultDimensionRules) {
  for (const ResultRow& row : ResultRows()) {
    Module module(row.body);
    DimensionMapping actual = exla::ResultDimension(module.op(), row.operand, row.dim);
    EXPECT_EQ(actual.ToString(), row.expected.ToString())
        << "rule: " << row.rule << " (operand " << row.operand << " dim " << row.dim << ")";
  }
}

TEST(SplitDimensionMap, AccumulationOpcode) {
  auto reduce_with = [](const std::string& reducer, const std::string& init) {
    return "  x = f32[4,6] parameter(0)\n  z = f32[] constant(" + init +
           ")\n  ROOT op = f32[4] reduce(x, z), dimensions={1}, to_apply=" + reducer + "\n";
  };
  // A sum restarts from its init value in every slice: it must be 0.
  EXPECT_TRUE(exla::AccumulationOpcode(Module(reduce_with("add_f32", "0")).op()) ==
              HloOpcode::kAdd);
  EXPECT_FALSE(exla::AccumulationOpcode(Module(reduce_with("add_f32", "1")).op()).has_value());
  // Repeating the init value of a max is harmless.
  EXPECT_TRUE(exla::AccumulationOpcode(Module(reduce_with("max_f32", "-inf")).op()) ==
              HloOpcode::kMaximum);
  EXPECT_FALSE(exla::AccumulationOpcode(Module(reduce_with("sub_f32", "0")).op()).has_value());
  Module dot(
      "  a = f32[4,6] parameter(0)\n  b = f32[6,8] parameter(1)\n"
      "  ROOT op = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  EXPECT_TRUE(exla::AccumulationOpcode(dot.op()) == HloOpcode::kAdd);
}

TEST(SplitDimensionMap, SplitterHandles) {
  EXPECT_TRUE(exla::SplitterHandles(
                  Module("  x = f32[4] parameter(0)\n  ROOT op = f32[4] negate(x)\n").op())
                  .ok());
  exla::WhyNot reverse = exla::SplitterHandles(
      Module("  x = f32[4] parameter(0)\n  ROOT op = f32[4] reverse(x), dimensions={0}\n").op());
  ASSERT_FALSE(reverse.ok());
  EXPECT_EQ(reverse.reason(), std::string("the splitter does not handle 'reverse'"));
  exla::WhyNot rng = exla::SplitterHandles(
      Module("  a = f32[] parameter(0)\n  ROOT op = f32[4] rng(a, a), distribution=rng_uniform\n")
          .op());
  ASSERT_FALSE(rng.ok());
  EXPECT_EQ(rng.reason(), std::string("it has side effects"));
}

TEST(SplitDimensionMap, MappingKindsAreDistinct) {
  // The special answers are never dimension numbers.
  EXPECT_FALSE(kUsedWhole.is_dimension());
  EXPECT_FALSE(kReducedAway.is_dimension());
  EXPECT_FALSE(kNotSplittable.is_dimension());
  EXPECT_TRUE(Dim(0) != kUsedWhole);
  EXPECT_EQ(Dim(3).dimension(), 3);
  EXPECT_THROW(kUsedWhole.dimension(), std::logic_error);
}

}  // namespace
