// The tensor splitter through selections that merge
// (cc/passes/tensor_splitter/topk_merge.h): a top-k or an arg-min split along
// the dimension it selects over becomes a loop that keeps the best
// candidates so far and merges each chunk's into them. One rule per test;
// the thresholds are in bytes so that a few KB count as oversized.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/dimension_map.h"
#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloComputation;
using exla::HloInstruction;
using exla::HloOpcode;
using exla_test::ModuleRun;
using exla_test::RunPassObject;
namespace m = exla::m;

// Distances from one query to 4096 points (d = 4), 64 KB before the sum
// over d: the query's row alone is above the limits below, so only the
// points can carry a loop. `selection` consumes `d` (f32[1,4096]).
std::string DistanceModule(const std::string& reducers, const std::string& selection) {
  return "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\n" +
         reducers + "ENTRY main {\n" + R"(
  q = f32[1,4]{1,0} parameter(0)
  p = f32[4096,4]{1,0} parameter(1)
  bq = f32[1,4096,4]{2,1,0} broadcast(q), dimensions={0,2}
  bp = f32[1,4096,4]{2,1,0} broadcast(p), dimensions={1,2}
  diff = f32[1,4096,4]{2,1,0} subtract(bq, bp)
  sq = f32[1,4096,4]{2,1,0} multiply(diff, diff)
  zero = f32[] constant(0)
  d = f32[1,4096]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
)" + selection + "}\n";
}

const std::string kTopK = DistanceModule("", R"(
  neg = f32[1,4096]{1,0} negate(d)
  t = (f32[1,8]{1,0}, s32[1,8]{1,0}) topk(neg), k=8, largest=true
  values = f32[1,8]{1,0} get-tuple-element(t), index=0
  indices = s32[1,8]{1,0} get-tuple-element(t), index=1
  ROOT out = (f32[1,8]{1,0}, s32[1,8]{1,0}) tuple(values, indices)
)");

// jnp.argmin's reducer: the smaller value, NaN first, the lower index on a tie.
const std::string kArgMinReducer = R"(argmin {
  lv = f32[] parameter(0)
  li = s32[] parameter(1)
  rv = f32[] parameter(2)
  ri = s32[] parameter(3)
  lt = pred[] compare(lv, rv), direction=LT
  nan = pred[] compare(lv, lv), direction=NE
  first = pred[] or(lt, nan)
  value = f32[] select(first, lv, rv)
  eq = pred[] compare(lv, rv), direction=EQ
  lower = pred[] compare(li, ri), direction=LT
  tie = pred[] and(eq, lower)
  pick = pred[] or(first, tie)
  index = s32[] select(pick, li, ri)
  ROOT r = (f32[], s32[]) tuple(value, index)
}

)";

const std::string kArgMin = DistanceModule(kArgMinReducer, R"(
  iota = s32[1,4096]{1,0} iota(), iota_dimension=1
  inf = f32[] constant(inf)
  izero = s32[] constant(0)
  r = (f32[1]{0}, s32[1]{0}) reduce(d, iota, inf, izero), dimensions={1}, to_apply=argmin
  ROOT index = s32[1]{0} get-tuple-element(r), index=1
)");

// The loop whose result the root (or the root's operand `operand`) reads.
const HloInstruction* LoopFeeding(const HloInstruction* value) {
  std::vector<const HloInstruction*> stack = {value};
  while (!stack.empty()) {
    const HloInstruction* current = stack.back();
    stack.pop_back();
    if (current->Is(HloOpcode::kWhile)) return current;
    for (const HloInstruction* operand : current->operands()) stack.push_back(operand);
  }
  return nullptr;
}

int CountInBody(const HloComputation* body, HloOpcode opcode) {
  int count = 0;
  for (const auto& instruction : body->instructions()) count += instruction->Is(opcode) ? 1 : 0;
  return count;
}

TEST(TopKMerge, TopKAlongItsRowIsReducedAway) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(kTopK);
  const HloInstruction* topk = module->entry()->FindInstruction("t");
  EXPECT_TRUE(exla::ResultDimension(*topk, 0, 1).is_reduced_away());
  EXPECT_EQ(exla::ResultDimension(*topk, 0, 0), exla::DimensionMapping::Dimension(0));
}

TEST(TopKMerge, TopKSplitsAlongPointsAndMergesCandidates) {
  // 64 KB of differences, 4 KB a trip: the loop runs over the points; the
  // body takes the chunk's top 8 and sorts them with the 8 kept so far.
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, kTopK);
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 1);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  const HloComputation* body = loop->CalledComputation("body");
  EXPECT_EQ(CountInBody(body, HloOpcode::kTopK), 1);
  EXPECT_EQ(CountInBody(body, HloOpcode::kSort), 1);
  const HloInstruction* chunk_topk = nullptr;
  for (const auto& instruction : body->instructions()) {
    if (instruction->Is(HloOpcode::kTopK)) chunk_topk = instruction.get();
  }
  ASSERT_TRUE(chunk_topk != nullptr);
  EXPECT_EQ(chunk_topk->RawAttribute("k"), std::optional<std::string>("8"));
  EXPECT_LT(chunk_topk->operand(0)->shape().dim(1), 4096);
}

TEST(TopKMerge, ChunkShorterThanKKeepsTheWholeChunk) {
  // 16 bytes per point, 64-byte trips: chunks of 4 points, fewer than
  // k = 8; each chunk's top-k is the whole chunk, the merge still keeps 8.
  exla::TensorSplitter splitter(4096, 64);
  const ModuleRun run = RunPassObject(splitter, kTopK);
  ASSERT_TRUE(run.changed);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  for (const auto& instruction : loop->CalledComputation("body")->instructions()) {
    if (instruction->Is(HloOpcode::kTopK)) {
      EXPECT_EQ(instruction->RawAttribute("k"), std::optional<std::string>("4"));
    }
    if (instruction->Is(HloOpcode::kSlice)) {
      EXPECT_EQ(instruction->shape().dims(), (std::vector<int64_t>{1, 8}));
    }
  }
}

TEST(TopKMerge, MergeOrdersTiesByIndex) {
  // The merge's comparator: the greater value in total order, or an equal
  // value at a lower index; the loop starts from candidates that lose to
  // every element (index 2^31 - 1).
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, kTopK);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  const HloComputation* order = nullptr;
  for (const auto& instruction : loop->CalledComputation("body")->instructions()) {
    if (instruction->Is(HloOpcode::kSort)) order = instruction->CalledComputation("to_apply");
  }
  ASSERT_TRUE(order != nullptr);
  HloInstruction* better = nullptr;
  HloInstruction* equal = nullptr;
  HloInstruction* lower = nullptr;
  const auto compare = [](HloInstruction** bind) {
    return m::OpWithOpcode(HloOpcode::kCompare, m::Parameter(), m::Parameter()).Bind(bind);
  };
  ASSERT_TRUE(exla::Match(order->root(), m::OpWithOpcode(HloOpcode::kOr, compare(&better),
                                                         m::OpWithOpcode(HloOpcode::kAnd, compare(&equal),
                                                                         compare(&lower)))));
  EXPECT_EQ(better->comparison_direction(), exla::ComparisonDirection::kGt);
  EXPECT_EQ(better->RawAttribute("type"), std::optional<std::string>("TOTALORDER"));
  EXPECT_EQ(equal->comparison_direction(), exla::ComparisonDirection::kEq);
  EXPECT_EQ(lower->comparison_direction(), exla::ComparisonDirection::kLt);
  EXPECT_EQ(lower->operand(0)->shape().element_type(), exla::PrimitiveType::kS32);
  const HloInstruction* init = loop->operand(0);
  ASSERT_TRUE(init->Is(HloOpcode::kTuple));
  bool past_every_index = false;
  for (const HloInstruction* element : init->operands()) {
    if (element->Is(HloOpcode::kTuple)) {
      past_every_index = element->operand(1)->operand(0)->payload() == "2147483647";
    }
  }
  EXPECT_TRUE(past_every_index);
}

TEST(TopKMerge, TopKAlongAnotherDimensionStays) {
  // The oversized dimension is the rows of a top-k over 8 columns: each
  // row's top-k is computed from that row, nothing is merged.
  exla::TensorSplitter splitter(64 * 1024, 16 * 1024);
  const ModuleRun run = RunPassObject(splitter, R"(HloModule m

ENTRY main {
  x = f32[8192,8]{1,0} parameter(0)
  e = f32[8192,8]{1,0} exponential(x)
  t = (f32[8192,2]{1,0}, s32[8192,2]{1,0}) topk(e), k=2, largest=true
  ROOT i = s32[8192,2]{1,0} get-tuple-element(t), index=1
}
)");
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 0);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  EXPECT_EQ(CountInBody(loop->CalledComputation("body"), HloOpcode::kSort), 0);
  EXPECT_EQ(CountInBody(loop->CalledComputation("body"), HloOpcode::kDynamicUpdateSlice), 1);
}

TEST(TopKMerge, ArgMinSplitsAlongPointsAndMergesPairs) {
  // jnp.argmin over the points: each trip reduces its chunk of (distance,
  // index) pairs, then the reducer picks between that pair and the best so
  // far (a reduce over two columns, the earlier chunk's first).
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, kArgMin);
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 1);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  int merges = 0;
  for (const auto& instruction : loop->CalledComputation("body")->instructions()) {
    HloInstruction* so_far = nullptr;
    if (exla::Match(instruction.get(),
                    m::Reduce(m::OpWithOpcode(HloOpcode::kConcatenate,
                                              m::Reshape(m::GetTupleElement(m::GetTupleElement(
                                                             m::Parameter()).Bind(&so_far))),
                                              m::Reshape()),
                              m::OpWithOpcode(HloOpcode::kConcatenate), m::Op(), m::Op()))) {
      ++merges;
      EXPECT_EQ(instruction->CalledComputation("to_apply")->name(), "argmin");
    }
  }
  EXPECT_EQ(merges, 1);
}

TEST(TopKMerge, ArgMinAlongTheFirstDimensionSplitsToo) {
  // As ArgMinSplitsAlongPointsAndMergesPairs with the points first: the
  // differences are 4096 x 1 x 4, and dimension 0 is the one the merging
  // loop runs over.
  const std::string module = "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                             "  ROOT s = f32[] add(a, b)\n}\n\n" + kArgMinReducer + R"(ENTRY main {
  q = f32[1,4]{1,0} parameter(0)
  p = f32[4096,4]{1,0} parameter(1)
  bq = f32[4096,1,4]{2,1,0} broadcast(q), dimensions={1,2}
  bp = f32[4096,1,4]{2,1,0} broadcast(p), dimensions={0,2}
  diff = f32[4096,1,4]{2,1,0} subtract(bq, bp)
  sq = f32[4096,1,4]{2,1,0} multiply(diff, diff)
  zero = f32[] constant(0)
  d = f32[4096,1]{1,0} reduce(sq, zero), dimensions={2}, to_apply=sum
  iota = s32[4096,1]{1,0} iota(), iota_dimension=0
  inf = f32[] constant(inf)
  izero = s32[] constant(0)
  r = (f32[1]{0}, s32[1]{0}) reduce(d, iota, inf, izero), dimensions={0}, to_apply=argmin
  ROOT index = s32[1]{0} get-tuple-element(r), index=1
}
)";
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, module);
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 0);
}

TEST(TopKMerge, VariadicReduceThatIsNotAnArgMinStays) {
  // A two-input reduce whose reducer adds: not a selection, not merged.
  const std::string text = DistanceModule(R"(pairsum {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t)
}

)", R"(
  iota = s32[1,4096]{1,0} iota(), iota_dimension=1
  izero = s32[] constant(0)
  r = (f32[1]{0}, s32[1]{0}) reduce(d, iota, zero, izero), dimensions={1}, to_apply=pairsum
  ROOT index = s32[1]{0} get-tuple-element(r), index=1
)");
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  const HloInstruction* reduce = module->entry()->FindInstruction("r");
  EXPECT_TRUE(exla::ResultDimension(*reduce, 0, 1).is_not_splittable());
  EXPECT_EQ(exla::ResultDimension(*reduce, 0, 0), exla::DimensionMapping::Dimension(0));
}

// tf.math.top_k(-d, 8) as TensorFlow lowers it: a stable sort of (values,
// iota) with a total-order "greater than", then the first 8 columns.
std::string TfTopK(const std::string& direction, const std::string& type) {
  return DistanceModule("greater {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                        "  c = s32[] parameter(2)\n  e = s32[] parameter(3)\n"
                        "  ROOT g = pred[] compare(a, b), direction=" + direction + type + "\n}\n\n",
                        R"(
  neg = f32[1,4096]{1,0} negate(d)
  iota = s32[1,4096]{1,0} iota(), iota_dimension=1
  sort = (f32[1,4096]{1,0}, s32[1,4096]{1,0}) sort(neg, iota), dimensions={1}, is_stable=true, to_apply=greater
  sorted = s32[1,4096]{1,0} get-tuple-element(sort), index=1
  ROOT first = s32[1,8]{1,0} slice(sorted), slice={[0:1], [0:8]}
)");
}

TEST(TopKMerge, TensorFlowSortThenSliceBecomesMergedTopK) {
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, TfTopK("GT", ", type=TOTALORDER"));
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 1);
  EXPECT_TRUE(exla::Match(run.module->entry()->root(),
                          m::GetTupleElement(m::GetTupleElement(m::While()))));
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  EXPECT_EQ(CountInBody(loop->CalledComputation("body"), HloOpcode::kTopK), 1);
  for (const auto& instruction : run.module->entry()->instructions()) {
    EXPECT_FALSE(instruction->Is(HloOpcode::kSort));
  }
}

TEST(TopKMerge, TotalOrderSpelledAsXla011PrintsItIsRecognised) {
  // jaxlib >= 0.11 prints the total order as `order=TOTAL`; it is the same
  // comparator as `type=TOTALORDER`.
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, TfTopK("GT", ", order=TOTAL"));
  ASSERT_TRUE(run.changed);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  EXPECT_EQ(CountInBody(loop->CalledComputation("body"), HloOpcode::kTopK), 1);
}

TEST(TopKMerge, PartialOrderSpelledAsXla011PrintsItStaysASort) {
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, TfTopK("GT", ", order=PARTIAL"));
  for (const auto& computation : run.module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      EXPECT_FALSE(instruction->Is(HloOpcode::kTopK));
    }
  }
}

TEST(TopKMerge, SortInPartialOrderStaysASort) {
  // Without type=TOTALORDER, NaNs and signed zeros order differently from
  // XLA's top-k: the sort is not rewritten.
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, TfTopK("GT", ""));
  bool sort_left = false;
  for (const auto& computation : run.module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      sort_left |= instruction->Is(HloOpcode::kSort);
      EXPECT_FALSE(instruction->Is(HloOpcode::kTopK));
    }
  }
  EXPECT_TRUE(sort_left);
}

TEST(TopKMerge, AscendingSortStaysASort) {
  // The smallest first is not `largest=true`.
  exla::TensorSplitter splitter(8 * 1024, 4 * 1024);
  const ModuleRun run = RunPassObject(splitter, TfTopK("LT", ", type=TOTALORDER"));
  for (const auto& computation : run.module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      EXPECT_FALSE(instruction->Is(HloOpcode::kTopK));
    }
  }
}

// 64 queries' scores against 4,096 points, top 8 of each query.
const std::string kQueryRows = "HloModule m\n\nENTRY main {\n"
                               "  x = f32[64,4096]{1,0} parameter(0)\n"
                               "  e = f32[64,4096]{1,0} exponential(x)\n"
                               "  t = (f32[64,8]{1,0}, s32[64,8]{1,0}) topk(e), k=8, largest=true\n"
                               "  ROOT i = s32[64,8]{1,0} get-tuple-element(t), index=1\n}\n";

TEST(TopKMerge, RowsArePreferredToMerging) {
  // 64 queries: a loop over blocks of queries needs no merge, and is faster
  // (kNN, 10,000 x 1,000,000: 18 s against 36-47 s over the points).
  exla::TensorSplitter splitter(64 * 1024, 32 * 1024);
  const ModuleRun run = RunPassObject(splitter, kQueryRows);
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 0);
}

TEST(TopKMerge, ChosenDimensionIsTakenEvenWhereItMerges) {
  // The preference for rows is the splitter's guess; a dimension chosen for
  // the tensor (the plan search's variant) is built as asked, so that the
  // models can judge the merging loop too.
  exla::TensorSplitter splitter(64 * 1024, 32 * 1024, false, {{"main/e", 1}});
  const ModuleRun run = RunPassObject(splitter, kQueryRows);
  ASSERT_TRUE(run.changed);
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 1);
  const HloInstruction* loop = LoopFeeding(run.module->entry()->root());
  ASSERT_TRUE(loop != nullptr);
  EXPECT_EQ(CountInBody(loop->CalledComputation("body"), HloOpcode::kSort), 1);
}

}  // namespace
