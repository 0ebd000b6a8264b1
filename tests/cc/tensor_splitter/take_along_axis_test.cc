// Per-row gathers and scatters in a form slices compute
// (cc/passes/tensor_splitter/take_along_axis.h), one behaviour per test, on
// the HLO jax.numpy.take_along_axis and its gradient lower to.
#include <memory>
#include <string>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/take_along_axis.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::FileCheck;
namespace m = exla::m;

std::string Module(const std::string& entry) {
  return "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n" + entry + "}\n";
}

// x[r, labels[r]] of an 8 x 512 matrix (16 KB).
const std::string kGather = Module(R"(
  x = f32[8,512]{1,0} parameter(0)
  labels = s32[8,1,1]{2,1,0} parameter(1)
  ROOT g = f32[8,1]{1,0} gather(x, labels), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
)");

// zeros with u[r] added at [r, labels[r]].
const std::string kScatter = Module(R"(
  labels = s32[8,1,1]{2,1,0} parameter(0)
  u = f32[8,1]{1,0} parameter(1)
  zero = f32[] constant(0)
  zeros = f32[8,512]{1,0} broadcast(zero), dimensions={}
  ROOT s = f32[8,512]{1,0} scatter(zeros, labels, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add
)");

TEST(TakeAlongAxis, GatherBecomesMaskedRowSum) {
  // The label is clamped into the row as the gather clamps it; the other
  // elements become -0, which leaves the sum (and its sign) unchanged.
  auto module = exla::ParseHloModule(kGather);
  ASSERT_TRUE(exla::RewriteTakeAlongAxis(module->entry(), 8192));
  EXPECT_TRUE(FileCheck(exla::PrintHloModule(*module), R"(
    CHECK:      ENTRY main {
    CHECK:      [[I:[a-z0-9.-]+]] = s32[8]{0} reshape(labels)
    CHECK:      [[LOW:[a-z0-9.-]+]] = s32[8]{0} minimum([[I]], {{.*}})
    CHECK:      [[C:[a-z0-9.-]+]] = s32[8]{0} maximum([[LOW]], {{.*}})
    CHECK:      [[IOTA:[a-z0-9.-]+]] = s32[8,512]{1,0} iota(), iota_dimension=1
    CHECK:      [[B:[a-z0-9.-]+]] = s32[8,512]{1,0} broadcast([[C]]), dimensions={0}
    CHECK:      [[MASK:[a-z0-9.-]+]] = pred[8,512]{1,0} compare([[B]], [[IOTA]]), direction=EQ
    CHECK:      [[NZ:[a-z0-9.-]+]] = f32[] constant(-0)
    CHECK:      [[P:[a-z0-9.-]+]] = f32[8,512]{1,0} select([[MASK]], x, {{.*}})
    CHECK:      [[R:[a-z0-9.-]+]] = f32[8]{0} reduce([[P]], [[NZ]]), dimensions={1}
    CHECK:      ROOT {{.*}} = f32[8,1]{1,0} reshape([[R]])
  )")) << exla::PrintHloModule(*module);
}

TEST(TakeAlongAxis, ScatterAddBecomesSelect) {
  // An update out of the row matches no column: skipped, as by the scatter.
  auto module = exla::ParseHloModule(kScatter);
  ASSERT_TRUE(exla::RewriteTakeAlongAxis(module->entry(), 8192));
  EXPECT_TRUE(exla::Match(
      module->entry()->root(),
      m::OpWithOpcode(exla::HloOpcode::kSelect,
                      m::OpWithOpcode(exla::HloOpcode::kCompare,
                                      m::Broadcast(m::Reshape(m::Parameter())),
                                      m::OpWithOpcode(exla::HloOpcode::kIota)),
                      m::Add(m::Broadcast(), m::Broadcast(m::Reshape(m::Parameter()))),
                      m::Broadcast())));
}

TEST(TakeAlongAxis, SmallTensorsKeepTheirGather) {
  // 16 KB under a 16 KB threshold: a gather reads one element per row, the
  // rewrite a whole row; it is only worth it where the rows must be split.
  auto module = exla::ParseHloModule(kGather);
  EXPECT_FALSE(exla::RewriteTakeAlongAxis(module->entry(), 16384));
  EXPECT_TRUE(module->entry()->root()->Is(exla::HloOpcode::kGather));
}

TEST(TakeAlongAxis, OtherGathersAreLeftAlone) {
  // A gather of whole rows (an embedding lookup) is no per-row element.
  auto module = exla::ParseHloModule(Module(R"(
  x = f32[512,8]{1,0} parameter(0)
  ids = s32[4,1]{1,0} parameter(1)
  ROOT g = f32[4,8]{1,0} gather(x, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
)"));
  EXPECT_FALSE(exla::RewriteTakeAlongAxis(module->entry(), 1024));
}

}  // namespace
