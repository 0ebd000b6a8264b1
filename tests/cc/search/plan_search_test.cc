// The plan search (search/plan_search.h): plans of the tensor splitter
// judged by the memory and cost models. Each test states a module, a target
// and what the search must consider; which plan wins is the caller's
// ranking (python/exla/_memory_limit.py), tested there.
#include <algorithm>
#include <string>

#include "passes/tensor_splitter/tensor_splitter.h"
#include "search/plan_search.h"
#include "tests/cc/test_harness.h"
#include "tests/cc/two_pass_module.h"

namespace {

using exla::Options;
using exla::PlanCandidate;
using exla::PlanOrigin;
using exla::PlanSearchOptions;
using exla::PlanSearchResult;
using exla::SearchPlans;

// A kernel matrix-vector product: a 4 MB kernel matrix between 40 kB of
// inputs and a 4 kB result.
constexpr char kKernelMatvec[] = R"(HloModule kmv

ENTRY kmv {
  x = f32[1000,8] parameter(0)
  v = f32[1000,1] parameter(1)
  k = f32[1000,1000] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  e = f32[1000,1000] exponential(k)
  ROOT kv = f32[1000,1] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

// K = exp(x yᵀ) is 8 MB.
const std::string kTwoPasses = exla_test::TwoPassModule("two", 2000, 1000);

PlanSearchResult Search(int64_t target, int64_t threshold = 0, int max_plans = 32,
                        const std::string& text = kKernelMatvec) {
  PlanSearchOptions options;
  options.target = target;
  options.threshold = threshold;
  options.max_plans = max_plans;
  return SearchPlans(text, Options{}, options);
}

int Count(const PlanSearchResult& result, PlanOrigin origin) {
  return static_cast<int>(std::count_if(result.plans.begin(), result.plans.end(),
                                        [&](const PlanCandidate& p) { return p.origin == origin; }));
}

TEST(PlanSearch, ProgramThatFitsIsLeftAsItIs) {
  const PlanSearchResult result = Search(/*target=*/100'000'000);
  ASSERT_EQ(result.plans.size(), 1u);
  EXPECT_EQ(result.plans[0].origin, PlanOrigin::kUserSettings);
  EXPECT_TRUE(result.plans[0].fits);
  EXPECT_FALSE(result.plans[0].changed);
  EXPECT_TRUE(result.plans[0].loops.empty());
}

TEST(PlanSearch, FloorIsTheArgumentsAndOutputs) {
  const PlanSearchResult result = Search(100'000'000);
  EXPECT_EQ(result.floor_bytes, 1000 * 8 * 4 + 1000 * 4 + 1000 * 4);
  EXPECT_GT(result.before.peak_bytes(), 4'000'000);  // the kernel matrix is whole
}

TEST(PlanSearch, HalvingReachesAPlanThatFitsWithLoops) {
  const PlanSearchResult result = Search(/*target=*/1'000'000);
  EXPECT_FALSE(result.plans[0].fits);
  EXPECT_GE(Count(result, PlanOrigin::kHalving), 1);
  const auto fitting = std::find_if(result.plans.begin(), result.plans.end(),
                                    [](const PlanCandidate& p) { return p.fits; });
  ASSERT_TRUE(fitting != result.plans.end());
  EXPECT_LE(fitting->memory.peak_bytes(), 1'000'000);
  EXPECT_FALSE(fitting->loops.empty());
  EXPECT_TRUE(fitting->changed);
}

TEST(PlanSearch, FitsMeansThePredictedPeakIsWithinTheTarget) {
  const PlanSearchResult result = Search(1'000'000);
  for (const PlanCandidate& plan : result.plans) {
    EXPECT_EQ(plan.fits, plan.memory.peak_bytes() <= 1'000'000);
  }
}

TEST(PlanSearch, UsersThresholdBoundsEveryPlan) {
  // The user's threshold alone does not reach the target: the search halves below it.
  const PlanSearchResult result = Search(300'000, /*threshold=*/3'000'000);
  ASSERT_FALSE(result.plans[0].fits);
  ASSERT_GE(result.plans.size(), 2u);
  for (const PlanCandidate& plan : result.plans) {
    EXPECT_LE(plan.settings.threshold, 3'000'000);
  }
}

TEST(PlanSearch, EachLoopIsTriedAlongItsOtherDimension) {
  const PlanSearchResult result = Search(1'000'000);
  ASSERT_GE(Count(result, PlanOrigin::kDimension), 1);
  for (const PlanCandidate& plan : result.plans) {
    if (plan.origin != PlanOrigin::kDimension) continue;
    ASSERT_EQ(plan.settings.dimensions.size(), 1u);
    const auto& [tensor, dimension] = *plan.settings.dimensions.begin();
    // The splitter took the dimension asked for: the loop over that tensor runs along it.
    const auto loop = std::find_if(plan.loops.begin(), plan.loops.end(), [&](const auto& l) {
      return l.computation + "/" + l.instruction == tensor;
    });
    ASSERT_TRUE(loop != plan.loops.end());
    EXPECT_EQ(loop->dimension, dimension);
  }
}

TEST(PlanSearch, LargerSlicesAreTriedForTheFirstChoice) {
  const PlanSearchResult result = Search(1'000'000);
  EXPECT_GE(Count(result, PlanOrigin::kLargerSlices), 1);
  for (const PlanCandidate& plan : result.plans) {
    if (plan.origin == PlanOrigin::kLargerSlices) {
      EXPECT_GT(plan.settings.split_size, 0);
    }
  }
}

TEST(PlanSearch, LargeSumsOnlyWhereNothingElseFits) {
  EXPECT_EQ(Count(Search(1'000'000), PlanOrigin::kLargeSums), 0);
}

TEST(PlanSearch, ValuesTheLoopsComputeAgainAreTriedKeptWhole) {
  // 10 MB leaves room for K or D whole, not both.
  const PlanSearchResult result = Search(10'000'000, 0, 32, kTwoPasses);
  const auto first = std::find_if(result.plans.begin(), result.plans.end(), [](const auto& p) {
    return p.fits && p.origin != PlanOrigin::kKeepWhole;
  });
  ASSERT_TRUE(first != result.plans.end());
  ASSERT_GT(first->recomputed_flops, 0);
  const auto keeps_k = std::find_if(result.plans.begin(), result.plans.end(), [](const auto& p) {
    return p.origin == PlanOrigin::kKeepWhole && p.settings.dimensions.count("two/k");
  });
  ASSERT_TRUE(keeps_k != result.plans.end());
  EXPECT_EQ(keeps_k->settings.dimensions.at("two/k"), exla::kKeepWhole);
  EXPECT_TRUE(keeps_k->fits);
  EXPECT_EQ(keeps_k->recomputed_flops, 0);
  EXPECT_GT(keeps_k->memory.peak_bytes(), 8'000'000);  // K is whole
  // The models see the work a kept value saves: keeping D, whose slices the
  // loops read to compute K's, is the fastest plan they predict (XLA ran it
  // in 3.8 ms, against 4.2 ms for the recomputing plan and 4.0 ms keeping K).
  const auto fastest = std::min_element(result.plans.begin(), result.plans.end(),
                                        [](const auto& a, const auto& b) {
    return std::make_pair(!a.fits, a.predicted_seconds) <
           std::make_pair(!b.fits, b.predicted_seconds);
  });
  EXPECT_EQ(fastest->origin, PlanOrigin::kKeepWhole);
  EXPECT_EQ(fastest->settings.dimensions.count("two/d"), 1u);
  EXPECT_LT(fastest->recomputed_flops, first->recomputed_flops);
}

TEST(PlanSearch, NothingIsKeptWholeWhereTheTargetLeavesNoRoom) {
  EXPECT_EQ(Count(Search(4'000'000, 0, 32, kTwoPasses), PlanOrigin::kKeepWhole), 0);
}

TEST(PlanSearch, NothingIsKeptWholeWherePlansRecomputeNothing) {
  EXPECT_EQ(Count(Search(1'000'000), PlanOrigin::kKeepWhole), 0);
}

TEST(PlanSearch, BudgetBoundsThePipelineRuns) {
  EXPECT_EQ(Search(1'000'000, 0, /*max_plans=*/3).plans.size(), 3u);
}

TEST(PlanSearch, MalformedTextIsRefused) {
  PlanSearchOptions options;
  options.target = 1000;
  EXPECT_THROW(SearchPlans("HloModule m\n\nENTRY e {\n  ROOT x = f32[2 parameter(0)\n}\n",
                           Options{}, options),
               std::invalid_argument);
}

}  // namespace
