// The tensor splitter on sharded programs (cc/analysis/sharding_analysis.h): the
// threshold holds for what one device holds, loops never run over a
// dimension that is cut between devices, shard_map bodies are split as the
// per-device programs they are, and collectives stay out of the loops. One
// rule per test; sizes are set in bytes so that tensors of a few KB count.
#include <string>

#include "tests/cc/filecheck.h"
#include "tests/cc/pass_test_bench.h"
#include "tests/cc/sharded_modules.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::CountOccurrences;
using exla_test::ExpectUnchanged;
using exla_test::FileCheck;
using exla_test::HasMessage;
using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::SizeOptions;

constexpr char kPass[] = "tensor-splitter";

using exla_test::kRows;
using exla_test::kSumReducer;

// The kernel matvec of tests/cc/sharded_modules.h.
std::string KernelMatvec(const std::string& x_sharding, const std::string& y_sharding,
                         const std::string& y = "y", const std::string& header = "HloModule m") {
  return exla_test::ShardedKernelMatvec(x_sharding, y_sharding, y, header);
}

TEST(TensorSplitterSharding, ThresholdHoldsForWhatOneDeviceHolds) {
  // 64 KB in all, 8 KB per device: within a 16 KB threshold.
  ExpectUnchanged(kPass, KernelMatvec(kRows, "{replicated}"), SizeOptions(16384, 4096));
}

TEST(TensorSplitterSharding, LoopRunsOverTheDimensionThatIsWhole) {
  // Rows of x are cut 8 ways, so the loop runs over y. One unit of it holds
  // 8 x 4 floats per device (128 bytes): 1 KB slices take 8 units.
  const PassRun run = RunPass(kPass, KernelMatvec(kRows, "{replicated}"), SizeOptions(4096, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(HasMessage(run, "on dimension 1 of extent 64: 8 chunks of 8"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      kv.split_body {
    CHECK:      [[Y:[a-z0-9.-]+]] = f32[8,4]{1,0} dynamic-slice(
    CHECK:      f32[64,8,4]{2,1,0} broadcast([[Y]]), dimensions={1,2}
    CHECK:      ENTRY main {
    CHECK-NOT:  custom-call
    CHECK:      while(
  )"));
}

// Distances from 64 queries (cut by rows) to 64 points, and the 2 nearest
// points of each query: a loop over the queries would gather them onto
// every device, a loop over the points (whole on every device) merges each
// chunk's top-k into the rows each device holds.
std::string Knn(const std::string& header = "HloModule m") {
  return header + "\n" + kSumReducer + R"(
ENTRY main {
  q = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  p = f32[64,4]{1,0} parameter(1), sharding={replicated}
  bq = f32[64,64,4]{2,1,0} broadcast(q), dimensions={0,2}
  bp = f32[64,64,4]{2,1,0} broadcast(p), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bq, bp)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(d, zero), dimensions={2}, to_apply=sum
  ROOT t = (f32[64,2]{1,0}, s32[64,2]{1,0}) topk(s), k=2, largest=true
}
)";
}

TEST(TensorSplitterSharding, SplitAcrossDevicesIsRefused) {
  // The loop runs over the points; the cut query rows stay cut.
  const PassRun run = RunPass(kPass, Knn(), SizeOptions(1024, 512));
  ASSERT_EQ(run.record.loops.size(), 1u);
  EXPECT_EQ(run.record.loops[0].dimension, 1);
  EXPECT_TRUE(run.record.unsplit.empty());
  EXPECT_EQ(CountOccurrences(run.text, "custom-call"), 0);
}

TEST(TensorSplitterSharding, SameSourceOnBothDimensionsGathersTheSmallInput) {
  // k(x_i, x_j) with x cut by rows: the loop over j slices a copy of x made
  // whole on every device once, before the loop; the rows i stay cut.
  const PassRun run = RunPass(kPass, KernelMatvec(kRows, "{replicated}", "x"),
                              SizeOptions(4096, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(HasMessage(run, "on dimension 1 of extent 64"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      kv.split_body {
    CHECK:      dynamic-slice(
    CHECK:      ENTRY main {
    CHECK:      x = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
    CHECK:      [[WHOLE:[a-z0-9.-]+]] = f32[64,4]{1,0} custom-call(x), custom_call_target="Sharding", sharding={replicated}
    CHECK-NOT:  frontend_attributes
    CHECK:      tuple({{.*}}[[WHOLE]]
    CHECK:      while(
  )"));
}

TEST(TensorSplitterSharding, GatherIsWrittenInShardysFormForShardy) {
  const PassRun run = RunPass(
      kPass,
      KernelMatvec(kRows, "{replicated}", "x",
                   R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}})"),
      SizeOptions(4096, 1024));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: custom-call(x), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>"}
  )"));
}

TEST(TensorSplitterSharding, InputTooLargeToGatherIsRefused) {
  // x is 1 KB: more than the 512-byte threshold allows a gathered copy.
  const std::string module = KernelMatvec(kRows, "{replicated}", "x");
  EXPECT_TRUE(HasMessage(RunPass(kPass, module, SizeOptions(512, 256)),
                         "x (1.0 KB) would be sliced along dimension 0, which is cut between 8 "
                         "devices, and is too large to gather onto every device"));
}

TEST(TensorSplitterSharding, BothPointSetsCutGathersOne) {
  // Both point sets cut by rows: the partitioner can cut the kernel along
  // one of them only, so the loop runs over the other, on a gathered copy.
  const PassRun run = RunPass(kPass, KernelMatvec(kRows, kRows), SizeOptions(4096, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: ENTRY main {
    CHECK: custom-call(y), custom_call_target="Sharding", sharding={replicated}
    CHECK: while(
  )"));
}

TEST(TensorSplitterSharding, DisagreeingShardingsCountWhole) {
  // The rows of x are cut, and w, added to the result row by row, is whole
  // on every device: how the kernel's rows are held depends on where the
  // partitioner reshards, so they count whole (64 KB, above the 16 KB
  // threshold) and carry no loop.
  std::string module = KernelMatvec(kRows, "{replicated}");
  module.replace(module.find("ROOT kv ="), 5, "");
  module.replace(module.rfind("}"), 1,
                 "  w = f32[64]{0} parameter(3), sharding={replicated}\n"
                 "  ROOT out = f32[64]{0} add(kv, w)\n}");
  const PassRun run = RunPass(kPass, module, SizeOptions(16384, 4096));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(HasMessage(run, "on dimension 1 of extent 64"));
}

TEST(TensorSplitterSharding, ResultAskedWholeDoesNotStopTheSplit) {
  // Rows cut at the input and the result asked whole on every device: the
  // partitioner gathers the result at the end, the kernel's rows stay cut
  // (8 KB per device, within a 16 KB threshold).
  std::string module = KernelMatvec(kRows, "{replicated}");
  module.replace(module.find("rhs_contracting_dims={0}"), 24,
                 "rhs_contracting_dims={0}, sharding={replicated}");
  ExpectUnchanged(kPass, module, SizeOptions(16384, 4096));
}

// A kernel matvec inside a shard_map (Shardy's form) over all 8 devices:
// each device reduces its own 64 x 64 kernel and the partial sums are added
// across devices by an all-reduce.
std::string ShardMapKernel(const std::string& manual_axes) {
  return std::string(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}}
)") + kSumReducer + R"(
xla.sdy.manual_computation_body.1 {
  x = f32[64,4]{1,0} parameter(0)
  v = f32[64]{0} parameter(1)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(x), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(d, zero), dimensions={2}, to_apply=sum
  k = f32[64,64]{1,0} exponential(s)
  kv = f32[64]{0} dot(k, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT total = f32[64]{0} all-reduce(kv), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=sum
}

ENTRY main {
  x = f32[512,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  v = f32[512]{0} parameter(1), sharding={devices=[8]<=[8]}
  lx = f32[64,4]{1,0} custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{)" +
         manual_axes + R"(}>"}
  lv = f32[64]{0} custom-call(v), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{)" +
         manual_axes + R"(}>"}
  r = f32[64]{0} call(lx, lv), to_apply=xla.sdy.manual_computation_body.1
  ROOT g = f32[512]{0} custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true
}
)";
}

TEST(TensorSplitterSharding, ShardMapBodyIsSplitAsOneDevicesProgram) {
  // The body's 64 KB difference is all one device's: split on its rows.
  const PassRun run = RunPass(kPass, ShardMapKernel(R"(\"x\")"), SizeOptions(4096, 1024));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:      kv.split_body {
    CHECK-NOT:  all-reduce
    CHECK:      ROOT {{.*}} tuple(
    CHECK:      xla.sdy.manual_computation_body.1 {
    CHECK:      [[W:[a-z0-9.-]+]] = {{.*}} while(
    CHECK:      [[KV:[a-z0-9.-]+]] = f32[64]{0} get-tuple-element([[W]]), index=1
    CHECK-NEXT: ROOT total = f32[64]{0} all-reduce([[KV]])
  )"));
}

TEST(TensorSplitterSharding, CollectiveNeverEntersALoop) {
  // The all-reduce takes the whole 64 x 64 kernel: a loop would have to
  // reduce each slice across devices, so the kernel stays as it is.
  const std::string module = std::string(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}}
)") + kSumReducer + R"(
xla.sdy.manual_computation_body.1 {
  x = f32[64,4]{1,0} parameter(0)
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast(x), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(d, zero), dimensions={2}, to_apply=sum
  ROOT total = f32[64,64]{1,0} all-reduce(s), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=sum
}

ENTRY main {
  x = f32[512,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  lx = f32[64,4]{1,0} custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
  r = f32[64,64]{1,0} call(lx), to_apply=xla.sdy.manual_computation_body.1
  ROOT g = f32[512,64]{1,0} custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true
}
)";
  const PassRun run = RunPass(kPass, module, SizeOptions(4096, 1024));
  EXPECT_TRUE(HasMessage(run, "total (all-reduce) cannot consume slices along dimension 0: it has "
                              "side effects"));
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK-NOT:  all-reduce{{.*}}
    CHECK:      xla.sdy.manual_computation_body.1 {
    CHECK:      s = f32[64,64]{1,0} reduce(
    CHECK-NEXT: ROOT total = f32[64,64]{1,0} all-reduce(s)
  )"));
}

TEST(TensorSplitterSharding, PartiallyManualShardMapIsLeftUnchanged) {
  // Over a 4 x 2 mesh, manual over "a" only: the partitioner may still cut
  // the body's values over "b".
  std::string module = ShardMapKernel(R"(\"a\")");
  module.replace(module.find(R"(["x"=8])"), 7, R"(["a"=4, "b"=2])");
  ExpectUnchanged(kPass, module, SizeOptions(4096, 1024));
  EXPECT_TRUE(HasMessage(RunPass(kPass, module, SizeOptions(4096, 1024)),
                         "the shard_map body xla.sdy.manual_computation_body.1 leaves mesh axes "
                         "to the partitioner: b"));
}

}  // namespace
