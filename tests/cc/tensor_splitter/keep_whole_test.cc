// kKeepWhole (tensor_splitter.h): a plan keeps a tensor whole instead of
// having the splitter's loops compute it again.
#include <string>

#include "passes/tensor_splitter/tensor_splitter.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"
#include "tests/cc/two_pass_module.h"

namespace {

using exla_test::CountOccurrences;
using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::SizeOptions;

constexpr char kPass[] = "tensor-splitter";

// K = exp(x yᵀ) is 80 KB.
const std::string kTwoPasses = exla_test::TwoPassModule("main", 200, 100);

constexpr int64_t kThreshold = 16 * 1024;
constexpr int64_t kSplitSize = 4 * 1024;

PassRun Run(const std::string& kept) {
  exla::Options options = SizeOptions(kThreshold, kSplitSize);
  if (!kept.empty()) options.split_dimensions["main/" + kept] = exla::kKeepWhole;
  return RunPass(kPass, kTwoPasses, options);
}

// The entry's values as large as K (k or d, whole).
int WholeMatrices(const PassRun& run) {
  const std::string entry = run.text.substr(run.text.find("ENTRY"));
  return CountOccurrences(entry, "= f32[200,100]");
}

TEST(KeepWhole, ByDefaultTheSecondLoopComputesTheProductAgain) {
  const PassRun run = Run("");
  EXPECT_GT(run.record.recomputed_flops, 200 * 100 * 16 * 2) << run.text;
  EXPECT_EQ(WholeMatrices(run), 0) << run.text;
}

TEST(KeepWhole, KeptValueIsWrittenWholeAndReadInsteadOfRecomputed) {
  const PassRun run = Run("k");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.record.recomputed_flops, 0) << run.text;
  // K, as the loop's result, written into the buffer the loop starts from.
  EXPECT_EQ(WholeMatrices(run), 2) << run.text;
  EXPECT_EQ(run.record.loops.size(), 1u) << run.text;
  for (const auto& u : run.record.unsplit) ADD_FAILURE() << u.instruction << ": " << u.reason;
}

TEST(KeepWhole, KeptProducerIsSlicedByTheLoopsThatNeedIt) {
  // D kept: the loops slice it and compute K from the slices, so only the
  // exponential is computed twice, not the product.
  const PassRun run = Run("d");
  EXPECT_EQ(WholeMatrices(run), 1) << run.text;
  EXPECT_LT(run.record.recomputed_flops, 200 * 100 * 16) << run.text;
  for (const exla::SplitLoop& loop : run.record.loops) {
    for (const std::string& name : loop.recomputed) EXPECT_NE(name, "d") << run.text;
  }
}

TEST(KeepWhole, KeepingEveryLargeValueLeavesTheModuleAlone) {
  exla::Options options = SizeOptions(kThreshold, kSplitSize);
  options.split_dimensions["main/d"] = exla::kKeepWhole;
  options.split_dimensions["main/k"] = exla::kKeepWhole;
  const PassRun run = RunPass(kPass, kTwoPasses, options);
  EXPECT_FALSE(run.changed) << run.text;
  EXPECT_TRUE(run.record.loops.empty());
}

}  // namespace
