// The concatenations XLA CPU keeps out of fused loops
// (cc/model/fusion/concatenate_fusion.h).
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "model/fusion/concatenate_fusion.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::IsUnfusedConcatenate;

// Whether the concatenate `c` of the module is kept out of loops.
bool Unfused(const std::string& module_text) {
  const std::unique_ptr<exla::HloModule> module = exla::ParseHloModule(module_text);
  return IsUnfusedConcatenate(*module->entry()->FindInstruction("c"));
}

std::string TwoParts(const std::string& part, const std::string& whole, int dimension) {
  return "HloModule m\n\nENTRY e {\n  a = f32[" + part + "]{1,0} parameter(0)\n  b = f32[" + part +
         "]{1,0} parameter(1)\n  ROOT c = f32[" + whole + "]{1,0} concatenate(a, b), dimensions={" +
         std::to_string(dimension) + "}\n}\n";
}

TEST(ConcatenateFusion, LongJoinAlongTheMinorDimensionIsUnfused) {
  EXPECT_TRUE(Unfused(TwoParts("8,64", "8,128", 1)));
}

TEST(ConcatenateFusion, ShortJoinAlongTheMinorDimensionIsFused) {
  EXPECT_FALSE(Unfused(TwoParts("8,63", "8,126", 1)));
}

TEST(ConcatenateFusion, JoinAlongTheMajorDimensionIsFused) {
  EXPECT_FALSE(Unfused(TwoParts("128,64", "256,64", 0)));
}

TEST(ConcatenateFusion, JoinOfMoreThanEightOperandsIsUnfused) {
  std::string text = "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  ROOT c = f32[36]{0} concatenate(";
  for (int i = 0; i < 9; ++i) text += i ? ", a" : "a";
  text += "), dimensions={0}\n}\n";
  EXPECT_TRUE(Unfused(text));
}

}  // namespace
