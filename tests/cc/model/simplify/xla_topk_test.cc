// Which sorts XLA's CPU backend runs as its top-k kernel
// (model/simplify/xla_topk.h). One condition of XLA's TopkRewriter per test, on a
// 16 x 4096 sort of which the first 8 columns are read.
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "model/simplify/xla_topk.h"
#include "tests/cc/test_harness.h"

namespace {

// `keys` and `indices` define x (the keys) and i (what is sorted with them);
// `reads` reads the sort s.
std::string SortModule(const std::string& keys, const std::string& indices,
                       const std::string& direction, const std::string& reads) {
  const std::string type = keys.substr(0, 3);
  return "HloModule m\n\ncmp {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
         "  ROOT g = pred[] compare(a, b), direction=" + direction + "\n}\n\nENTRY e {\n  x = " +
         keys + "\n  i = " + indices + "\n  s = (" + type +
         "[16,4096]{1,0}, s32[16,4096]{1,0}) sort(x, i), dimensions={1}, to_apply=cmp\n" + reads +
         "}\n";
}

const char kF32Keys[] = "f32[16,4096]{1,0} parameter(0)";
const char kIota[] = "s32[16,4096]{1,0} iota(), iota_dimension=1";
const char kFirstEight[] =
    "  v = f32[16,4096]{1,0} get-tuple-element(s), index=0\n"
    "  ix = s32[16,4096]{1,0} get-tuple-element(s), index=1\n"
    "  sv = f32[16,8]{1,0} slice(v), slice={[0:16], [0:8]}\n"
    "  si = s32[16,8]{1,0} slice(ix), slice={[0:16], [0:8]}\n"
    "  ROOT t = (f32[16,8]{1,0}, s32[16,8]{1,0}) tuple(sv, si)\n";

bool RunsAsTopK(const std::string& text) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(text);
  return exla::XlaRunsAsTopK(*module->entry()->FindInstruction("s"));
}

TEST(XlaTopK, TensorFlowsTopKIsRunAsTopK) {
  EXPECT_TRUE(RunsAsTopK(SortModule(kF32Keys, kIota, "GT", kFirstEight)));
}

TEST(XlaTopK, BroadcastIotaIsIndicesToo) {
  std::string text = SortModule(kF32Keys, "s32[16,4096]{1,0} broadcast(n), dimensions={1}", "GT",
                                kFirstEight);
  text.replace(text.find("  i = "), 0, "  n = s32[4096]{0} iota(), iota_dimension=0\n");
  EXPECT_TRUE(RunsAsTopK(text));
}

TEST(XlaTopK, GatheredIndicesKeepTheSort) {
  // exla's merge of candidates sorts indices from earlier trips.
  EXPECT_FALSE(RunsAsTopK(SortModule(kF32Keys, "s32[16,4096]{1,0} parameter(1)", "GT",
                                     kFirstEight)));
}

TEST(XlaTopK, AscendingOrderKeepsTheSort) {
  EXPECT_FALSE(RunsAsTopK(SortModule(kF32Keys, kIota, "LT", kFirstEight)));
}

TEST(XlaTopK, F64KeysKeepTheSort) {
  std::string reads = kFirstEight;
  for (size_t at = reads.find("f32"); at != std::string::npos; at = reads.find("f32")) {
    reads.replace(at, 3, "f64");
  }
  EXPECT_FALSE(RunsAsTopK(SortModule("f64[16,4096]{1,0} parameter(0)", kIota, "GT", reads)));
}

TEST(XlaTopK, ReadingPastTheFrontKeepsTheSort) {
  const std::string whole =
      "  v = f32[16,4096]{1,0} get-tuple-element(s), index=0\n"
      "  ix = s32[16,4096]{1,0} get-tuple-element(s), index=1\n"
      "  sv = f32[16,8]{1,0} slice(v), slice={[0:16], [0:8]}\n"
      "  ROOT t = (f32[16,8]{1,0}, s32[16,4096]{1,0}) tuple(sv, ix)\n";
  EXPECT_FALSE(RunsAsTopK(SortModule(kF32Keys, kIota, "GT", whole)));
}

TEST(XlaTopK, SlicingTheBatchKeepsTheSort) {
  const std::string half_the_rows =
      "  v = f32[16,4096]{1,0} get-tuple-element(s), index=0\n"
      "  ix = s32[16,4096]{1,0} get-tuple-element(s), index=1\n"
      "  sv = f32[8,8]{1,0} slice(v), slice={[0:8], [0:8]}\n"
      "  si = s32[8,8]{1,0} slice(ix), slice={[0:8], [0:8]}\n"
      "  ROOT t = (f32[8,8]{1,0}, s32[8,8]{1,0}) tuple(sv, si)\n";
  EXPECT_FALSE(RunsAsTopK(SortModule(kF32Keys, kIota, "GT", half_the_rows)));
}

}  // namespace
