// XLA's decomposition of a top-k without a kernel, whose values alone are
// read (cc/model/simplify/topk_decomposition.h).
#include <string>

#include "model/simplify/topk_decomposition.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::TopKDecomposition;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// The 4 largest of each row of an @[64,256] array; the entry returns the
// exponential of the values and, where $ is `add(e, c)`, adds the indices.
std::string TopK(const std::string& type, const std::string& result) {
  std::string text = R"(HloModule m

ENTRY e {
  x = @[64,256]{1,0} parameter(0)
  t = (@[64,4]{1,0}, s32[64,4]{1,0}) topk(x), k=4, largest=true
  i = s32[64,4]{1,0} get-tuple-element(t), index=1
  v = @[64,4]{1,0} get-tuple-element(t), index=0
  e = @[64,4]{1,0} exponential(v)
  c = @[64,4]{1,0} convert(i)
  ROOT r = @[64,4]{1,0} $
})";
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@')) text.replace(at, 1, type);
  text.replace(text.find('$'), 1, result);
  return text;
}

TEST(TopKDecomposition, ValuesAloneAreASortOfTheKeysAndASlice) {
  TopKDecomposition pass;
  const auto run = RunSimplification(pass, TopK("f64", "copy(e)"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     topk_order
    CHECK:     compare({{.*}}), direction=GT
    CHECK:     ENTRY
    CHECK-NOT: topk(
    CHECK:     [[SORT:[^ ]+]] = f64[64,256]{1,0} sort(x), dimensions={1}, to_apply=topk_order
    CHECK:     [[VALUES:[^ ]+]] = f64[64,4]{1,0} slice([[SORT]]), slice={[0:64], [0:4]}
    CHECK:     e = f64[64,4]{1,0} exponential([[VALUES]])
  )"));
}

TEST(TopKDecomposition, IndicesReadKeepTheTopK) {
  TopKDecomposition pass;
  const auto run = RunSimplification(pass, TopK("f64", "add(e, c)"));
  EXPECT_FALSE(run.changed);
}

TEST(TopKDecomposition, F32IsLeftToXlasKernel) {
  TopKDecomposition pass;
  const auto run = RunSimplification(pass, TopK("f32", "copy(e)"));
  EXPECT_FALSE(run.changed);
}

}  // namespace
