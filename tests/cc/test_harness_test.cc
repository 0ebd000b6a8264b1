// Tests of the test harness itself (tests/cc/test_harness.h): the messages
// its assertions produce and the --filter syntax. A failing EXPECT cannot be
// tested by running it (it would fail this binary), so these call the
// functions the macros expand to.
#include "tests/cc/test_harness.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using exla_test::AssertionResult;
using exla_test::internal::CheckTrue;
using exla_test::internal::Compare;
using exla_test::internal::FilterAccepts;

bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(Harness, CompareReportsBothSides) {
  const AssertionResult result =
      Compare(3, 4, "x", "y", "==", [](int a, int b) { return a == b; });
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "Expected: (x) == (y)"));
  EXPECT_TRUE(Contains(result.message(), "x: 3"));
  EXPECT_TRUE(Contains(result.message(), "y: 4"));
  EXPECT_TRUE(Compare(3, 3, "x", "y", "==", [](int a, int b) { return a == b; }));
}

TEST(Harness, StringsAreQuotedAndTextShownAsIs) {
  const auto eq = [](const std::string& a, const std::string& b) { return a == b; };
  const AssertionResult one_line = Compare(std::string("a\"b"), std::string("c"), "s", "t",
                                           "==", eq);
  EXPECT_TRUE(Contains(one_line.message(), "s: \"a\\\"b\""));
  const AssertionResult text = Compare(std::string("l1\nl2\n"), std::string("x"), "s", "t",
                                       "==", eq);
  EXPECT_TRUE(Contains(text.message(), "-----\nl1\nl2\n-----"));
}

TEST(Harness, CheckTruePassesOnReason) {
  const AssertionResult failed = CheckTrue(AssertionResult::Failure("the reason"), "cond", true);
  EXPECT_FALSE(failed);
  EXPECT_TRUE(Contains(failed.message(), "Value of: cond"));
  EXPECT_TRUE(Contains(failed.message(), "the reason"));
  EXPECT_TRUE(CheckTrue(AssertionResult::Success(), "cond", true));
  EXPECT_TRUE(CheckTrue(false, "cond", false));
  EXPECT_FALSE(CheckTrue(1, "cond", false));
}

TEST(Harness, FilterSyntax) {
  EXPECT_TRUE(FilterAccepts("", "Dce.RemovesDead"));
  EXPECT_TRUE(FilterAccepts("Dce.*", "Dce.RemovesDead"));
  EXPECT_FALSE(FilterAccepts("Dce.*", "Dcex.RemovesDead"));
  EXPECT_TRUE(FilterAccepts("Foo.*:Dce.Removes?ead", "Dce.RemovesDead"));
  EXPECT_FALSE(FilterAccepts("Dce.*-*Dead", "Dce.RemovesDead"));
  EXPECT_TRUE(FilterAccepts("-*Dead", "Dce.KeepsLive"));
  EXPECT_FALSE(FilterAccepts("Dce", "Dce.KeepsLive"));  // globs match the whole name
}

TEST(Harness, ThrowMacros) {
  EXPECT_THROW(throw std::invalid_argument("x"), std::invalid_argument);
  EXPECT_THROW(throw std::invalid_argument("x"), std::exception);  // a base class
  EXPECT_NO_THROW((void)0);
}

TEST(Harness, AssertEndsOnlyTheTest) {
  // Reached: a passing ASSERT does not end the test.
  int reached = 0;
  ASSERT_TRUE(true);
  ++reached;
  ASSERT_EQ(reached, 1);
}

}  // namespace
