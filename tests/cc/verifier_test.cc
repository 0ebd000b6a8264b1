// C++ tests of exla's verifier (cc/ir/verifier*.cc) where it disagreed with
// XLA's on mutated corpus programs: text cut inside an operand list. Built
// as build/cctest/verifier_test (make cctest) and by Bazel as //:verifier_test.

#include <stdexcept>
#include <string>

#include "ir/parser.h"
#include "ir/verifier.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::AssertionResult;

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

TEST(Verifier, TextCutAfterAnOpenParenthesisIsAParseError) {
  // Was std::out_of_range from string_view::substr (an internal error).
  const std::string text = "HloModule m\nENTRY main {\n  a = f32[4] parameter(0)\n  b = f32[4] add(";
  EXPECT_TRUE(Rejects(text, "line 4"));
  EXPECT_TRUE(Rejects(text + "a,", "line 4"));
}

}  // namespace
