// Rules of the topk-prefilter pass (cc/passes/topk_prefilter.h): a top-k of
// a long row reads only the k blocks with the largest maxima. One rule per
// test; the numbers (values and indices against the unrewritten program,
// ties and NaNs included) are checked in tests/python/test_topk_prefilter.py.
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::PassRun;
using exla_test::RunPass;

constexpr char kPass[] = "topk-prefilter";

// A top-k of `k` over rows of `n` (two rows, of the negated input, as a
// kNN's top-k of negated distances).
std::string TopKModule(int n, int k, const std::string& extra = "") {
  const std::string row = "f32[2," + std::to_string(n) + "]{1,0}";
  const std::string out = "[2," + std::to_string(k) + "]{1,0}";
  return "HloModule m\n\nENTRY main {\n  x = " + row + " parameter(0)\n  neg = " + row +
         " negate(x)\n  ROOT t = (f32" + out + ", s32" + out + ") topk(neg), k=" +
         std::to_string(k) + extra + "\n}\n";
}

std::string Messages(const PassRun& run) {
  std::string all;
  for (const std::string& message : run.messages) all += message + "\n";
  return all;
}

bool Refused(const PassRun& run, const std::string& reason) {
  for (const std::string& message : run.messages) {
    if (message.find("not prefiltered") != std::string::npos &&
        message.find(reason) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(TopKPrefilter, LargeTopKReadsTheBestBlocks) {
  // n = 65,536, k = 4: B = 32 (sqrt(n / k) = 128, capped at 32), 2,048
  // blocks, 4 * 32 = 128 candidates.
  const PassRun run = RunPass(kPass, TopKModule(65536, 4, ", largest=true"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     s32[2,2048,32]{2,1,0} reshape(
    CHECK:     s32[2,2048]{1,0} reduce({{.*}}), dimensions={2}
    CHECK:     topk({{.*}}), k=4, largest=true
    CHECK:     s32[2,4]{1,0} sort({{.*}}), dimensions={1}
    CHECK:     f32[2,4,32]{2,1,0} gather({{.*}}), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}
    CHECK:     f32[2,128]{1,0} reshape(
    CHECK:     topk({{.*}}), k=4, largest=true
  )"));
}

TEST(TopKPrefilter, BlockMaximaInTotalOrderNotMaximum) {
  // The block maxima are taken on the integers XLA's total order maps floats
  // to (a NaN does not swallow its block, -0 ranks below +0), not with a
  // floating-point maximum.
  const PassRun run = RunPass(kPass, TopKModule(65536, 4));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     s32[2,65536]{1,0} bitcast-convert(
    CHECK:     shift-right-arithmetic(
    CHECK:     xor(
    CHECK:     reduce(
    CHECK:     xor(
    CHECK:     f32[2,2048]{1,0} bitcast-convert(
    CHECK-NOT: f32[] maximum(
  )"));
}

TEST(TopKPrefilter, IndicesMappedBackToTheRow) {
  // Candidate position p is element p % B of chosen block p / B (chosen
  // blocks in ascending order): index = block * B + p % B.
  const PassRun run = RunPass(kPass, TopKModule(65536, 4));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      [[B:[a-z0-9._-]+]] = s32[] constant(32)
    CHECK:      [[W:[a-z0-9._-]+]] = s32[2,4]{1,0} broadcast([[B]])
    CHECK:      [[SLOT:[a-z0-9._-]+]] = s32[2,4]{1,0} divide([[P:[a-z0-9._-]+]], [[W]])
    CHECK:      [[IN:[a-z0-9._-]+]] = s32[2,4]{1,0} remainder([[P]], [[W]])
    CHECK:      [[BLOCK:[a-z0-9._-]+]] = s32[2,4]{1,0} reshape(
    CHECK:      [[START:[a-z0-9._-]+]] = s32[2,4]{1,0} multiply([[BLOCK]], [[W]])
    CHECK:      [[INDEX:[a-z0-9._-]+]] = s32[2,4]{1,0} add([[START]], [[IN]])
    CHECK:      ROOT {{.*}} tuple({{.*}}, [[INDEX]]
  )"));
}

TEST(TopKPrefilter, ChosenBlocksSortedAscending) {
  // Ascending block order keeps the candidates in row order, so the second
  // top-k breaks ties by the lower index as the original did.
  const PassRun run = RunPass(kPass, TopKModule(65536, 4));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      topk_prefilter_ascending
    CHECK:      ROOT {{.*}} = pred[] compare({{.*}}), direction=LT
  )"));
}

TEST(TopKPrefilter, RefusesShortRow) {
  const PassRun run = RunPass(kPass, TopKModule(8192, 8));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(Refused(run, "is shorter than 64 * k * B")) << Messages(run);
  ExpectUnchanged(kPass, TopKModule(8192, 8));
}

TEST(TopKPrefilter, RefusesLargeK) {
  const PassRun run = RunPass(kPass, TopKModule(65536, 512));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(Refused(run, "too few blocks")) << Messages(run);
}

TEST(TopKPrefilter, RefusesRowWithoutDivisor) {
  // 65,537 is prime: no block size divides it.
  const PassRun run = RunPass(kPass, TopKModule(65537, 8));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(Refused(run, "no divisor of the row length 65537 between 8 and 32"))
      << Messages(run);
}

TEST(TopKPrefilter, RefusesSmallestK) {
  const PassRun run = RunPass(kPass, TopKModule(65536, 8, ", largest=false"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(Refused(run, "smallest k")) << Messages(run);
}

TEST(TopKPrefilter, RefusesOtherThanF32) {
  std::string module = TopKModule(65536, 4);
  for (size_t at = module.find("f32"); at != std::string::npos; at = module.find("f32", at)) {
    module.replace(at, 3, "f64");
  }
  const PassRun run = RunPass(kPass, module);
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(Refused(run, "not f32")) << Messages(run);
}

}  // namespace
