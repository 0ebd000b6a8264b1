// C++ tests of exla's verifier (cc/ir/verifier*.cc) where it disagreed with
// XLA's on mutated corpus programs (tests/ir/test_verifier_agreement.py):
// operand counts XLA's parser fixes, attributes XLA's parser does not know,
// constant literals that are not values, and text cut inside an operand
// list. Built as build/cctest/verifier_test (make cctest) and by Bazel as
// //:verifier_test.

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/verifier.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::AssertionResult;

std::string Module(const std::string& entry, const std::string& extra = "") {
  return "HloModule m\n" + extra + "\nENTRY main {\n" + entry + "\n}\n";
}

// Success iff the module parses and verifies.
AssertionResult Verifies(const std::string& text) {
  try {
    exla::VerifyModuleOrThrow(*exla::ParseHloModule(text), text);
  } catch (const std::invalid_argument& e) {
    return AssertionResult::Failure(std::string("rejected: ") + e.what());
  }
  return AssertionResult::Success();
}

// Success iff parsing or verifying throws std::invalid_argument naming
// `fragment` (any other exception is a failure: it is an internal error).
AssertionResult Rejects(const std::string& text, const std::string& fragment) {
  try {
    exla::VerifyModuleOrThrow(*exla::ParseHloModule(text), text);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(fragment) != std::string::npos) {
      return AssertionResult::Success();
    }
    return AssertionResult::Failure(std::string("message lacks '") + fragment + "': " + e.what());
  } catch (const std::exception& e) {
    return AssertionResult::Failure(std::string("not invalid_argument: ") + e.what());
  }
  return AssertionResult::Failure("accepted");
}

const char kAdd[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
})";

const char kBranches[] = R"(
yes {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
no {
  b = f32[4] parameter(0)
  ROOT c = f32[4] copy(b)
})";

TEST(Verifier, TextCutAfterAnOpenParenthesisIsAParseError) {
  // Was std::out_of_range from string_view::substr (an internal error).
  const std::string text = "HloModule m\nENTRY main {\n  a = f32[4] parameter(0)\n  b = f32[4] add(";
  EXPECT_TRUE(Rejects(text, "line 4"));
  EXPECT_TRUE(Rejects(text + "a,", "line 4"));
}

TEST(Verifier, OperandCountsXlaFixes) {
  EXPECT_TRUE(Rejects(Module("  p = pred[] parameter(0)\n  a = f32[4] parameter(1)\n"
                             "  ROOT c = f32[4] conditional(p, a), true_computation=yes, "
                             "false_computation=no",
                             kBranches),
                      "conditional with 2 branches takes 3 operand(s), has 2"));
  EXPECT_TRUE(Verifies(Module("  p = pred[] parameter(0)\n  a = f32[4] parameter(1)\n"
                              "  ROOT c = f32[4] conditional(p, a, a), true_computation=yes, "
                              "false_computation=no",
                              kBranches)));
  EXPECT_TRUE(Rejects(Module("  i = s32[] parameter(0)\n  a = f32[4] parameter(1)\n"
                             "  ROOT c = f32[4] conditional(i, a), branch_computations={yes, no}",
                             kBranches),
                      "takes 3 operand(s), has 2"));
  EXPECT_TRUE(Rejects(Module("  a = f32[4,4] parameter(0)\n"
                             "  ROOT r = f32[2,2] reduce-window(a), window={size=2x2 stride=2x2}, "
                             "to_apply=add",
                             kAdd),
                      "reduce-window takes an even number (at least 2) of operand(s), has 1"));
  EXPECT_TRUE(Rejects(Module("  a = f32[4,4] parameter(0)\n"
                             "  ROOT t = f32[4,4] triangular-solve(a), left_side=true, lower=true, "
                             "transpose_a=NO_TRANSPOSE"),
                      "triangular-solve takes 2 operand(s), has 1"));
  EXPECT_TRUE(Rejects(Module("  a = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n"
                             "  ROOT g = (f32[2,3], f32[3], f32[3]) batch-norm-grad(a, s, s, s), "
                             "epsilon=0.001, feature_index=1"),
                      "batch-norm-grad takes 5 operand(s), has 4"));
  EXPECT_TRUE(Rejects(Module("  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a, a)"),
                      "negate takes 1 operand(s), has 2"));
}

TEST(Verifier, AttributesXlaDoesNotKnow) {
  EXPECT_TRUE(Rejects(Module("  a = f32[4] parameter(0)\n"
                             "  ROOT s = f32[4] add(a, a), no_such_attribute={1,2}"),
                      "add has no attribute 'no_such_attribute'"));
  EXPECT_TRUE(Rejects(Module("  a = f32[4] parameter(0)\n"
                             "  ROOT n = f32[4] negate(a), result_accuracy={mode=highest}"),
                      "negate has no attribute 'result_accuracy'"));
  // Attributes every instruction may carry, and each opcode's own.
  EXPECT_TRUE(Verifies(Module(
      "  a = f32[4] parameter(0), sharding={replicated}\n"
      "  e = f32[4] exponential(a), result_accuracy={mode=highest}\n"
      "  c = pred[4] compare(a, e), direction=LT, type=TOTALORDER, metadata={op_name=\"x\"}\n"
      "  s = f32[4] select(c, a, e), backend_config={\"k\":1}, frontend_attributes={a=\"b\"}\n"
      "  ROOT r = f32[2,2] reshape(s), inferred_dimension=0")));
  // The total order as jaxlib >= 0.11 prints it.
  EXPECT_TRUE(Verifies(Module("  a = f32[4] parameter(0)\n"
                              "  ROOT c = pred[4] compare(a, a), direction=LT, order=TOTAL")));
  // An opcode exla does not know keeps whatever attributes it has.
  EXPECT_TRUE(Verifies(Module("  a = f32[4] parameter(0)\n"
                              "  ROOT x = f32[4] some-future-op(a), whatever={1,2}")));
}

TEST(Verifier, ConstantLiteralsHoldValues) {
  EXPECT_TRUE(Rejects(Module("  ROOT c = f32[] constant(not.a.value)"),
                      "constant literal has 'not.a.value', which is not a value"));
  EXPECT_TRUE(Rejects(Module("  ROOT c = s32[2] constant({1, x})"), "'x', which is not a value"));
  EXPECT_TRUE(Verifies(Module(
      "  a = f32[6] constant({nan, -inf, inf, -0, 1.5e-45, 3.40282347e+38})\n"
      "  b = f32[2] constant({-nan(0x7fffff), 0.1})\n"
      "  c = pred[2,2] constant({ {true, false}, {0, 1} })\n"
      "  d = c64[2] constant({(1, -2.5), (nan, inf)})\n"
      "  e = u32[2] constant({4294967295, 0})\n"
      "  ROOT t = (f32[6], f32[2], pred[2,2], c64[2], u32[2]) tuple(a, b, c, d, e)")));
}

TEST(Verifier, BatchNormShapes) {
  // A corpus mutant widened the broadcast feeding batch-norm-training's
  // scale; XLA rejects it, exla had no shape rule for batch norms.
  EXPECT_TRUE(Rejects(Module("  x = f32[2,3,4] parameter(0)\n  s = f32[5] parameter(1)\n"
                             "  ROOT t = (f32[2,3,4], f32[4], f32[4]) batch-norm-training(x, s, s), "
                             "epsilon=0.001, feature_index=2"),
                      "batch-norm-training operand 1 is f32[5], not f32[4]"));
  EXPECT_TRUE(Verifies(Module("  x = f32[2,3,4] parameter(0)\n  s = f32[4] parameter(1)\n"
                              "  ROOT t = (f32[2,3,4], f32[4], f32[4]) batch-norm-training(x, s, s), "
                              "epsilon=0.001, feature_index=2")));
  EXPECT_TRUE(Verifies(Module("  x = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n"
                              "  ROOT y = f32[2,3] batch-norm-inference(x, s, s, s, s), "
                              "epsilon=0.001, feature_index=1")));
  EXPECT_TRUE(Rejects(Module("  x = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n"
                             "  g = f32[3,2] parameter(2)\n"
                             "  ROOT y = (f32[2,3], f32[3], f32[3]) batch-norm-grad(x, s, s, s, g), "
                             "epsilon=0.001, feature_index=1"),
                      "batch-norm-grad operand 4 is f32[3,2], not f32[2,3]"));
  EXPECT_TRUE(Rejects(Module("  x = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n"
                             "  ROOT y = f32[2,3] batch-norm-inference(x, s, s, s, s), "
                             "epsilon=0.001, feature_index=2"),
                      "feature_index out of range"));
}

// The messages VerifyModule gives for `text`, which must parse.
std::vector<std::string> Messages(const std::string& text) {
  std::vector<std::string> messages;
  for (const exla::VerifierError& error : exla::VerifyModule(*exla::ParseHloModule(text))) {
    messages.push_back(error.message);
  }
  return messages;
}

TEST(Verifier, ACommentThatIsNotClosedIsOneViolation) {
  // One checker reads a literal's values and comments; the count and nesting
  // checks after it never see an unclosed comment, so this is the only
  // message, whatever the constant's shape (XLA's parser refuses all three).
  const std::vector<std::string> expected = {"constant literal has an unterminated comment"};
  EXPECT_EQ(Messages(Module("  ROOT c = f32[1,1,1] constant({ /*i0=0 { {1} } })")), expected);
  EXPECT_EQ(Messages(Module("  ROOT c = c64[2] constant({(1, 2), (3, 4) /* x})")), expected);
  EXPECT_EQ(Messages(Module("  ROOT c = f32[2] constant({1, 2 /* x})")), expected);
}

TEST(Verifier, ParenthesesGroupValuesOfComplexAndTupleConstantsOnly) {
  EXPECT_TRUE(Verifies(Module("  ROOT c = c64[1] constant({(nan(0x3), 2)})")));
  EXPECT_TRUE(Verifies(Module("  ROOT c = (f32[], s32[]) constant((1, 2))")));
  EXPECT_TRUE(Rejects(Module("  ROOT c = f32[2] constant({(1), 2})"), "'(1)', which is not a value"));
  EXPECT_TRUE(Rejects(Module("  ROOT c = (f32[], s32[]) constant((1, b))"),
                      "'b', which is not a value"));
  // Hexadecimal digits belong to a NaN's payload only, as in XLA's lexer.
  EXPECT_TRUE(Rejects(Module("  ROOT c = c64[2] constant({(0x1, 2), (3, 4)})"),
                      "'0x1', which is not a value"));
  EXPECT_TRUE(Rejects(Module("  ROOT c = f32[2] constant({nan(xyz), 1})"),
                      "'nan(xyz)', which is not a value"));
}

TEST(Verifier, IntegerConstantsHoldIntegers) {
  EXPECT_TRUE(Verifies(Module("  ROOT c = s32[2] constant({-1, +2})")));
  EXPECT_TRUE(Rejects(Module("  ROOT c = s32[2] constant({1.5, 1})"),
                      "'1.5', which is not a value of s32"));
  EXPECT_TRUE(Rejects(Module("  ROOT c = pred[2] constant({true, 0.5})"),
                      "'0.5', which is not a value of pred"));
}

TEST(Verifier, EntryLayoutMismatchPointsAtTheParameterShape) {
  const std::string text =
      "HloModule m, entry_computation_layout={(f32[4]{0}, f32[5]{0})->f32[4]{0}}\n\n"
      "ENTRY main {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] add(a, b)\n}\n";
  EXPECT_TRUE(Rejects(text, "line 1, column 52: entry_computation_layout gives parameter 1 the "
                            "shape f32[5] but it is f32[4] (near 'f32[5]{0}')"));
}

}  // namespace
