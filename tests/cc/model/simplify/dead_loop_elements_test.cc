// XLA's while loop simplifier's removal of dead loop state
// (cc/model/simplify/dead_loop_elements.h).
#include <string>

#include "model/simplify/dead_loop_elements.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::DeadLoopElements;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// A loop over a counter, a vector the entry reads after it and a matrix
// whose sine it takes on each trip. @ is where the body may read the
// matrix's sine for the vector; $ is what the entry returns.
constexpr char kLoop[] = R"(HloModule m

add {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT w = f32[] add(u, v)
}

body {
  p = (s32[], f32[256]{0}, f32[256,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[256]{0} get-tuple-element(p), index=1
  d = f32[256,64]{1,0} get-tuple-element(p), index=2
  one = s32[] constant(1)
  zero = f32[] constant(0)
  i1 = s32[] add(i, one)
  s = f32[256,64]{1,0} sine(d)
  b = f32[256]{0} reduce(s, zero), dimensions={1}, to_apply=add
  e = f32[256]{0} exponential(@)
  ROOT t = (s32[], f32[256]{0}, f32[256,64]{1,0}) tuple(i1, e, s)
}

cond {
  p = (s32[], f32[256]{0}, f32[256,64]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[256]{0} parameter(0)
  y = f32[256,64]{1,0} parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[256]{0}, f32[256,64]{1,0}) tuple(zero, x, y)
  w = (s32[], f32[256]{0}, f32[256,64]{1,0}) while(t), condition=cond, body=body
  dead = f32[256,64]{1,0} get-tuple-element(w), index=2
  ROOT r = $
})";

std::string Loop(const std::string& read_in_body, const std::string& result) {
  std::string text = kLoop;
  text.replace(text.find('@'), 1, read_in_body);
  text.replace(text.find('$'), 1, result);
  return text;
}

const char kVector[] = "f32[256]{0} get-tuple-element(w), index=1";

TEST(DeadLoopElements, ElementThatFeedsOnlyItselfIsRemoved) {
  DeadLoopElements pass;
  const auto run = RunSimplification(pass, Loop("a", kVector));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     body
    CHECK:     p = (s32[], f32[256]{0}) parameter(0)
    CHECK-NOT: sine(
    CHECK:     ROOT t = (s32[], f32[256]{0}) tuple(i1, e)
    CHECK:     cond
    CHECK:     p = (s32[], f32[256]{0}) parameter(0)
    CHECK:     ENTRY
    CHECK:     t = (s32[], f32[256]{0}) tuple(zero, x)
    CHECK:     w = (s32[], f32[256]{0}) while(t)
    CHECK:     ROOT r = f32[256]{0} get-tuple-element(w), index=1
  )"));
}

TEST(DeadLoopElements, ElementReadAfterTheLoopIsKept) {
  // The entry reads the matrix: it stays, and the vector, now read by
  // nothing after the loop and feeding only itself, goes.
  DeadLoopElements pass;
  const auto run = RunSimplification(pass, Loop("a", "f32[256,64]{1,0} get-tuple-element(w), index=2"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     sine(d)
    CHECK-NOT: exponential(
    CHECK:     ROOT t = (s32[], f32[256,64]{1,0}) tuple(i1, s)
    CHECK:     ENTRY
    CHECK:     ROOT r = f32[256,64]{1,0} get-tuple-element(w), index=1
  )"));
}

TEST(DeadLoopElements, ElementThatFeedsAnotherIsKept) {
  DeadLoopElements pass;
  const auto run = RunSimplification(pass, Loop("b", kVector));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: sine(d)"));
}

TEST(DeadLoopElements, ElementTheConditionReadsIsKept) {
  DeadLoopElements pass;
  std::string text = Loop("a", kVector);
  const std::string bound = "  n = s32[] constant(10)\n";
  const size_t at = text.find(bound, text.find("cond {"));
  text.replace(at, bound.size(),
               "  d = f32[256,64]{1,0} get-tuple-element(p), index=2\n"
               "  sl = f32[1,1]{1,0} slice(d), slice={[0:1], [0:1]}\n"
               "  f = f32[] reshape(sl)\n"
               "  n = s32[] convert(f)\n");
  const auto run = RunSimplification(pass, text);
  EXPECT_FALSE(run.changed);
}

}  // namespace
