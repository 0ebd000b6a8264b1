// Options::split_dimensions: the dimension the plan search asks the
// tensor-splitter to split a named tensor along first.
#include <string>

#include "tests/cc/pass_test_bench.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::SizeOptions;

constexpr char kPass[] = "tensor-splitter";

// exp(x . y^T) . v: the 64 x 128 kernel matrix (32 KB) can be split along its
// rows (dimension 0, through x) or its columns (dimension 1, through y and
// v, accumulating the product).
constexpr char kKernelMatvec[] = R"(HloModule m

ENTRY main {
  x = f32[64,4] parameter(0)
  y = f32[128,4] parameter(1)
  v = f32[128] parameter(2)
  k = f32[64,128] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  e = f32[64,128] exponential(k)
  ROOT kv = f32[64] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

// The dimension of the one loop the splitter built.
int64_t LoopDimension(const PassRun& run) {
  EXPECT_EQ(run.record.loops.size(), 1u);
  return run.record.loops.empty() ? -1 : run.record.loops[0].dimension;
}

TEST(SplitDimensions, LongestDimensionByDefault) {
  const PassRun run = RunPass(kPass, kKernelMatvec, SizeOptions(8 * 1024, 2 * 1024));
  EXPECT_EQ(LoopDimension(run), 1);
}

TEST(SplitDimensions, ChosenDimensionComesFirst) {
  exla::Options options = SizeOptions(8 * 1024, 2 * 1024);
  options.split_dimensions["main/k"] = 0;
  const PassRun run = RunPass(kPass, kKernelMatvec, options);
  EXPECT_EQ(LoopDimension(run), 0);
  EXPECT_EQ(run.record.loops[0].instruction, "k");
}

TEST(SplitDimensions, ChoiceForAnotherTensorChangesNothing) {
  exla::Options options = SizeOptions(8 * 1024, 2 * 1024);
  options.split_dimensions["main/e"] = 0;  // e joins k's loop; k decides the dimension
  EXPECT_EQ(LoopDimension(RunPass(kPass, kKernelMatvec, options)), 1);
}

TEST(SplitDimensions, DimensionThatCannotCarryALoopFallsBackToTheUsualOrder) {
  exla::Options options = SizeOptions(8 * 1024, 2 * 1024);
  options.split_dimensions["main/k"] = 7;  // no such dimension
  EXPECT_EQ(LoopDimension(RunPass(kPass, kKernelMatvec, options)), 1);
}

}  // namespace
