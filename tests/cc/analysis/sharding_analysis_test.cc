// What one device holds of a sharded module (cc/analysis/sharding_analysis.h):
// the pieces of each dimension, per-device sizes and which dimensions a loop
// may run over, one rule per test on a short module.
#include "analysis/sharding_analysis.h"

#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "tests/cc/sharded_modules.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloInstruction;
using exla::ShardingAnalysis;

struct Module {
  explicit Module(const std::string& text)
      : module(exla::ParseHloModule(text)), sharding(*module) {}
  const HloInstruction& Get(const std::string& name) const {
    for (const auto& computation : module->computations()) {
      if (const HloInstruction* found = computation->FindInstruction(name)) return *found;
    }
    throw std::invalid_argument("no instruction " + name);
  }
  std::unique_ptr<exla::HloModule> module;
  ShardingAnalysis sharding;
};

// The kernel matvec of tests/cc/sharded_modules.h.
std::string Kernel(const std::string& x_sharding, const std::string& y_sharding,
                   const std::string& y = "y") {
  return exla_test::ShardedKernelMatvec(x_sharding, y_sharding, y);
}

TEST(ShardingAnalysis, WithoutAnnotationsEveryDeviceHoldsWholeValues) {
  Module m(R"(HloModule m

ENTRY main {
  x = f32[64,4]{1,0} parameter(0)
  ROOT b = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
}
)");
  EXPECT_FALSE(m.sharding.active());
  EXPECT_EQ(m.sharding.devices(), 1);
  EXPECT_EQ(m.sharding.Pieces(m.Get("b"), 1), 1);
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("b")), 64 * 64 * 4 * 4);
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("b"), 0).ok());
}

TEST(ShardingAnalysis, PiecesFollowTheDimensionMap) {
  Module m(Kernel("{devices=[8,1]<=[8]}", "{replicated}"));
  EXPECT_TRUE(m.sharding.active());
  EXPECT_EQ(m.sharding.devices(), 8);
  // The rows of x become dimension 0 of the broadcast, the difference, the
  // reduction and the result; y's rows are whole everywhere.
  EXPECT_EQ(m.sharding.Pieces(m.Get("d"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("d"), 1), 1);
  EXPECT_EQ(m.sharding.Pieces(m.Get("d"), 2), 1);
  EXPECT_EQ(m.sharding.Pieces(m.Get("s"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("kv"), 0), 8);
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("d")), 64 * 64 * 4 * 4 / 8);
  // With dimension 1 whole (what a loop over it keeps), dimension 0 is still cut.
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("d"), 1), 64 * 64 * 4 * 4 / 8);
}

TEST(ShardingAnalysis, LoopMayNotRunOverTheOnlyCutDimension) {
  Module m(Kernel("{devices=[8,1]<=[8]}", "{replicated}"));
  exla::WhyNot rows = m.sharding.MayLoopOver(m.Get("d"), 0);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.reason(), "dimension 0 of d is cut between 8 devices (a loop over it would "
                           "gather it onto every device)");
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("d"), 1).ok());
}

TEST(ShardingAnalysis, OneSourceOnTwoDimensionsCutsOnlyOne) {
  // k(x_i, x_j) with x cut by rows: the partitioner cuts one dimension of
  // the kernel and gathers x for the other.
  Module m(Kernel("{devices=[8,1]<=[8]}", "{replicated}", "x"));
  EXPECT_EQ(m.sharding.Pieces(m.Get("d"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("d"), 1), 8);
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("d")), 64 * 64 * 4 * 4 / 8);
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("d"), 1), 64 * 64 * 4 * 4 / 8);
  // So a loop over either dimension leaves the other cut: no device holds more.
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("d"), 1).ok());
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("d"), 0).ok());
}

TEST(ShardingAnalysis, CutsNeverMultiplyPastTheDevices) {
  // Both point sets cut 8 ways over 8 devices: the kernel cannot be cut 64 ways.
  Module m(Kernel("{devices=[8,1]<=[8]}", "{devices=[8,1]<=[8]}"));
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("d")), 64 * 64 * 4 * 4 / 8);
}

TEST(ShardingAnalysis, SmallInputCutAlongTheSliceIsGathered) {
  Module m(Kernel("{devices=[8,1]<=[8]}", "{replicated}", "x"));
  bool gather = false;
  EXPECT_TRUE(m.sharding.MaySlice(m.Get("x"), 0, /*limit=*/4096, &gather).ok());
  EXPECT_TRUE(gather);
  EXPECT_TRUE(m.sharding.MaySlice(m.Get("v"), 0, 4096, &gather).ok());
  EXPECT_FALSE(gather);  // whole on every device already
}

TEST(ShardingAnalysis, LargeInputCutAlongTheSliceIsRefused) {
  Module m(Kernel("{devices=[8,1]<=[8]}", "{replicated}", "x"));
  bool gather = false;
  exla::WhyNot sliced = m.sharding.MaySlice(m.Get("x"), 0, /*limit=*/512, &gather);
  ASSERT_FALSE(sliced.ok());
  EXPECT_EQ(sliced.reason(), "x (1.0 KB) would be sliced along dimension 0, which is cut between "
                             "8 devices, and is too large to gather onto every device");
}

TEST(ShardingAnalysis, DisagreeingShardingsRefuseTheDimension) {
  Module m(R"(HloModule m

ENTRY main {
  a = f32[64,64]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  b = f32[64,64]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  ROOT c = f32[64,64]{1,0} add(a, b)
}
)");
  exla::WhyNot rows = m.sharding.MayLoopOver(m.Get("c"), 0);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.reason(), "dimension 0 of c may be cut between devices: its shardings disagree");
  EXPECT_FALSE(m.sharding.MayLoopOver(m.Get("c"), 1).ok());
}

TEST(ShardingAnalysis, UnknownPartitioningIsRefused) {
  // Nothing maps through a gather: the partitioner decides alone.
  Module m(R"(HloModule m

ENTRY main {
  x = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  i = s32[16,1]{1,0} parameter(1), sharding={replicated}
  ROOT g = f32[16,4]{1,0} gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)");
  exla::WhyNot rows = m.sharding.MayLoopOver(m.Get("g"), 0);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.reason(), "how XLA partitions dimension 0 of g is not known");
  // Its size counts whole.
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("g")), 16 * 4 * 4);
}

TEST(ShardingAnalysis, LoopStateCarriesShardingsIntoTheBody) {
  Module m(R"(HloModule m

cond {
  s = (s32[], f32[64,4]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[64,4]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[64,4]{1,0} get-tuple-element(s), index=1
  e = f32[64,4]{1,0} exponential(x)
  ROOT t = (s32[], f32[64,4]{1,0}) tuple(j, e)
}

ENTRY main {
  p = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  zero = s32[] constant(0)
  init = (s32[], f32[64,4]{1,0}) tuple(zero, p)
  w = (s32[], f32[64,4]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[64,4]{1,0} get-tuple-element(w), index=1
}
)");
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 1), 1);
  EXPECT_EQ(m.sharding.Pieces(m.Get("r"), 0), 8);
}

TEST(ShardingAnalysis, ShardingConstraintReshardsInsteadOfPassingThrough) {
  Module m(R"(HloModule m

ENTRY main {
  x = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  w = f32[64,4]{1,0} custom-call(x), custom_call_target="Sharding", sharding={replicated}
  ROOT e = f32[64,4]{1,0} exponential(w)
}
)");
  EXPECT_EQ(m.sharding.Pieces(m.Get("x"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 1);
}

// A shard_map in Shardy's form: the body is a computation that one device
// runs on its own piece (4 x 4 of 16 x 8 over a 4 x 2 mesh).
std::string ShardMap(const std::string& manual_axes) {
  return R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=4, "b"=2]>}}

xla.sdy.manual_computation_body.1 {
  p = f32[4,4]{1,0} parameter(0)
  ROOT e = f32[4,4]{1,0} exponential(p)
}

ENTRY main {
  x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  local = f32[4,4]{1,0} custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{)" +
         manual_axes + R"(}>"}
  r = f32[4,4]{1,0} call(local), to_apply=xla.sdy.manual_computation_body.1
  ROOT g = f32[16,8]{1,0} custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true
}
)";
}

TEST(ShardingAnalysis, ShardMapBodyIsWhatOneDeviceHolds) {
  Module m(ShardMap(R"(\"a\", \"b\")"));
  EXPECT_EQ(m.sharding.devices(), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 1);
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("e")), 4 * 4 * 4);
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("e"), 0).ok());
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("e"), 1).ok());
}

TEST(ShardingAnalysis, PartiallyManualShardMapBodyIsRefused) {
  Module m(ShardMap(R"(\"a\")"));
  exla::WhyNot split = m.sharding.MayLoopOver(m.Get("e"), 0);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.reason(), "dimension 0 of e may be cut between devices: the shard_map body "
                            "xla.sdy.manual_computation_body.1 leaves mesh axes to the "
                            "partitioner: b");
  bool gather = false;
  EXPECT_FALSE(m.sharding.MaySlice(m.Get("p"), 0, 1 << 20, &gather).ok());
}

// Two inputs, as jaxlib >= 0.11 prints a shard_map: the manual axes only on
// the custom call that enters the body, reached through get-tuple-elements
// (jaxlib <= 0.10 copied them onto the get-tuple-elements too).
std::string ShardMapOfTwoInputs(const std::string& manual_axes) {
  return R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=4, "b"=2]>}}

xla.sdy.manual_computation_body.1 {
  p = f32[4,4]{1,0} parameter(0)
  q = f32[4,4]{1,0} parameter(1)
  ROOT e = f32[4,4]{1,0} add(p, q)
}

ENTRY main {
  x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  y = f32[16,8]{1,0} parameter(1), sharding={devices=[4,2]<=[8]}
  local = (f32[4,4]{1,0}, f32[4,4]{1,0}) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{)" +
         manual_axes + R"(}>"}
  lx = f32[4,4]{1,0} get-tuple-element(local), index=0
  ly = f32[4,4]{1,0} get-tuple-element(local), index=1
  r = f32[4,4]{1,0} call(lx, ly), to_apply=xla.sdy.manual_computation_body.1
  ROOT g = f32[16,8]{1,0} custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true
}
)";
}

TEST(ShardingAnalysis, ManualAxesAreReadThroughGetTupleElements) {
  Module m(ShardMapOfTwoInputs(R"(\"a\", \"b\")"));
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 1);
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("e"), 0).ok());
  Module partial(ShardMapOfTwoInputs(R"(\"a\")"));
  EXPECT_FALSE(partial.sharding.MayLoopOver(partial.Get("e"), 0).ok());
}

TEST(ShardingAnalysis, GspmdManualRegionIsWhatOneDeviceHolds) {
  Module m(R"(HloModule m

ENTRY main {
  x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  s = f32[16,8]{1,0} custom-call(x), custom_call_target="Sharding", sharding={devices=[4,2]<=[8]}
  local = f32[4,4]{1,0} custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  e = f32[4,4]{1,0} exponential(local)
  r = f32[4,4]{1,0} custom-call(e), custom_call_target="Sharding", sharding={manual}
  ROOT g = f32[16,8]{1,0} custom-call(r), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,2]<=[8]}
}
)");
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 1);
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("e"), 1).ok());
  EXPECT_EQ(m.sharding.Pieces(m.Get("g"), 0), 4);
}

TEST(ShardingAnalysis, PartiallyManualGspmdValueIsRefused) {
  Module m(R"(HloModule m

ENTRY main {
  x = f32[16,8]{1,0} parameter(0), sharding={devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}
  ROOT e = f32[16,8]{1,0} exponential(x)
}
)");
  exla::WhyNot split = m.sharding.MayLoopOver(m.Get("e"), 0);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.reason(), "dimension 0 of e may be cut between devices: x is manual over only "
                            "some mesh axes (a shard_map that leaves the others to the "
                            "partitioner)");
}

TEST(ShardingAnalysis, ResultShardingGivesWayToTheInputs) {
  // x is cut by rows; the first result is asked whole: the partitioner
  // computes with x's rows cut and gathers the result at the end.
  Module m(R"(HloModule m

ENTRY main {
  x = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  e = f32[64,4]{1,0} exponential(x)
  n = f32[64,4]{1,0} negate(x)
  ROOT t = (f32[64,4]{1,0}, f32[64,4]{1,0}) tuple(e, n), sharding={{replicated}, {devices=[8,1]<=[8]}}
}
)");
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 8);
  EXPECT_EQ(m.sharding.Pieces(m.Get("n"), 0), 8);
  EXPECT_FALSE(m.sharding.MayLoopOver(m.Get("e"), 0).ok());
  EXPECT_EQ(m.sharding.DeviceByteSize(m.Get("e")), 64 * 4 * 4 / 8);
}

TEST(ShardingAnalysis, ResultShardingCutsWhatNoInputDecides) {
  Module m(R"(HloModule m

ENTRY main {
  i = f32[64,4]{1,0} iota(), iota_dimension=0
  e = f32[64,4]{1,0} exponential(i)
  y = f32[64,4]{1,0} parameter(0), sharding={replicated}
  n = f32[64,4]{1,0} negate(y)
  ROOT t = (f32[64,4]{1,0}, f32[64,4]{1,0}) tuple(e, n), sharding={{devices=[8,1]<=[8]}, {devices=[8,1]<=[8]}}
}
)");
  EXPECT_EQ(m.sharding.Pieces(m.Get("e"), 0), 8);  // only the result says how
  EXPECT_EQ(m.sharding.Pieces(m.Get("n"), 0), 1);  // the input says whole
  EXPECT_TRUE(m.sharding.MayLoopOver(m.Get("n"), 0).ok());
}

}  // namespace
