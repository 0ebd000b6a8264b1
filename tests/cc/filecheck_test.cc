// Tests of the FileCheck-style checker (tests/cc/filecheck.h): each
// directive must accept the texts it describes and reject the others, and a
// rejection must say where.
#include "tests/cc/filecheck.h"

#include <string>

#include "tests/cc/test_harness.h"

namespace {

using exla_test::AssertionResult;
using exla_test::FileCheck;

bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

const char kText[] = R"(HloModule m

ENTRY main.4 {
  p0.1 = f32[8]{0} parameter(0)
  neg.2 = f32[8]{0} negate(p0.1)
  ROOT add.3 = f32[8]{0} add(neg.2, p0.1)
}
)";

TEST(FileCheck, CheckFindsLiteralInOrder) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: parameter(0)\nCHECK: negate(p0.1)\nCHECK: ROOT add.3"));
}

TEST(FileCheck, CheckFailsOutOfOrder) {
  EXPECT_FALSE(FileCheck(kText, "CHECK: negate(p0.1)\nCHECK: parameter(0)"));
}

TEST(FileCheck, CheckFailsOnMissingText) {
  const AssertionResult result = FileCheck(kText, "CHECK: multiply(");
  EXPECT_FALSE(result);
  // The failure names the directive and shows where the search began.
  EXPECT_TRUE(Contains(result.message(), "checks:1: CHECK: multiply("));
  EXPECT_TRUE(Contains(result.message(), "scanning from here"));
  EXPECT_TRUE(Contains(result.message(), "1 | HloModule m"));
}

TEST(FileCheck, FailureShowsTextAfterPreviousMatch) {
  const AssertionResult result = FileCheck(kText, "CHECK: negate\nCHECK: multiply");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "checks:2: CHECK: multiply"));
  EXPECT_TRUE(Contains(result.message(), "5 |   neg.2 = f32[8]{0} negate(p0.1)"));
}

TEST(FileCheck, LiteralRegexCharactersAreLiteral) {
  // '[', '{', '(' and '.' in plain text are not regex syntax.
  EXPECT_TRUE(FileCheck(kText, "CHECK: f32[8]{0} negate(p0.1)"));
  EXPECT_FALSE(FileCheck("f32[8]{0} negate(p0X1)", "CHECK: negate(p0.1)"));
}

TEST(FileCheck, WhitespaceRunsMatchAnyWhitespace) {
  EXPECT_TRUE(FileCheck("a   =  b", "CHECK: a = b"));
  EXPECT_FALSE(FileCheck("a=b", "CHECK: a = b"));
}

TEST(FileCheck, CommentPrefixIsIgnored) {
  EXPECT_TRUE(FileCheck(kText, "// CHECK: negate\n; CHECK-NEXT: ROOT"));
}

TEST(FileCheck, NextAcceptsFollowingLine) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: neg.2 =\nCHECK-NEXT: ROOT add.3"));
}

TEST(FileCheck, NextRejectsLaterLine) {
  const AssertionResult result = FileCheck(kText, "CHECK: p0.1 =\nCHECK-NEXT: ROOT add.3");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "2 lines after the previous match"));
}

TEST(FileCheck, NextRejectsSameLine) {
  const AssertionResult result = FileCheck(kText, "CHECK: neg.2\nCHECK-NEXT: negate");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "on the same line as the previous match"));
}

TEST(FileCheck, SameAcceptsRestOfLine) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: ROOT\nCHECK-SAME: add(\nCHECK-SAME: p0.1)"));
}

TEST(FileCheck, SameRejectsNextLine) {
  EXPECT_FALSE(FileCheck(kText, "CHECK: negate\nCHECK-SAME: ROOT"));
  // And text before the previous match on its line does not count.
  EXPECT_FALSE(FileCheck(kText, "CHECK: negate\nCHECK-SAME: neg.2"));
}

TEST(FileCheck, NotPassesWhenAbsent) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: parameter\nCHECK-NOT: multiply\nCHECK: ROOT"));
}

TEST(FileCheck, NotFailsWhenPresentBetweenMatches) {
  const AssertionResult result =
      FileCheck(kText, "CHECK: parameter\nCHECK-NOT: negate\nCHECK: ROOT");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "excluded pattern found"));
  EXPECT_TRUE(Contains(result.message(), "CHECK-NOT: negate"));
}

TEST(FileCheck, NotOnlyCoversItsRange) {
  // negate occurs, but before the match the NOT follows.
  EXPECT_TRUE(FileCheck(kText, "CHECK: negate\nCHECK-NOT: negate"));
  // A leading NOT covers up to the first match; a trailing one to the end.
  EXPECT_FALSE(FileCheck(kText, "CHECK-NOT: HloModule\nCHECK: ENTRY"));
  EXPECT_FALSE(FileCheck(kText, "CHECK: ENTRY\nCHECK-NOT: ROOT"));
}

TEST(FileCheck, NotAloneChecksWholeText) {
  EXPECT_TRUE(FileCheck(kText, "CHECK-NOT: while("));
  EXPECT_FALSE(FileCheck(kText, "CHECK-NOT: negate("));
}

TEST(FileCheck, DagMatchesInAnyOrder) {
  EXPECT_TRUE(FileCheck(kText, "CHECK-DAG: ROOT add.3\nCHECK-DAG: p0.1 = \nCHECK-DAG: neg.2 ="));
}

TEST(FileCheck, DagMatchesDoNotOverlap) {
  // Two DAG directives for the same text need two occurrences.
  EXPECT_TRUE(FileCheck("x = a\ny = a\n", "CHECK-DAG: a\nCHECK-DAG: a"));
  EXPECT_FALSE(FileCheck("x = a\n", "CHECK-DAG: a\nCHECK-DAG: a"));
}

TEST(FileCheck, DagGroupEndsAtItsLastMatch) {
  // After the group, CHECK searches from the end of its last match.
  EXPECT_TRUE(FileCheck(kText, "CHECK-DAG: negate\nCHECK-DAG: parameter\nCHECK: ROOT"));
  EXPECT_FALSE(FileCheck(kText, "CHECK-DAG: ROOT\nCHECK-DAG: parameter\nCHECK: negate"));
}

TEST(FileCheck, NotBeforeDagGroupCoversUpToItsFirstMatch) {
  EXPECT_FALSE(FileCheck(kText, "CHECK: ENTRY\nCHECK-NOT: parameter\nCHECK-DAG: ROOT\n"
                                "CHECK-DAG: negate"));
  EXPECT_TRUE(FileCheck(kText, "CHECK: ENTRY\nCHECK-NOT: ROOT\nCHECK-DAG: parameter\n"
                               "CHECK-DAG: negate"));
}

TEST(FileCheck, RegexBlock) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: neg.{{[0-9]+}} = f32[{{[0-9]+}}]"));
  EXPECT_FALSE(FileCheck(kText, "CHECK: neg.{{[a-z]+}} ="));
}

TEST(FileCheck, RegexBlockWithBraceQuantifier) {
  EXPECT_TRUE(FileCheck("f32[128]", "CHECK: f32[{{[0-9]{3}}}]"));
  EXPECT_FALSE(FileCheck("f32[12]", "CHECK: f32[{{[0-9]{3}}}]"));
}

TEST(FileCheck, RegexDoesNotCrossLines) {
  EXPECT_FALSE(FileCheck("a\nb", "CHECK: a{{[^x]*}}b"));
  EXPECT_TRUE(FileCheck("a b", "CHECK: a{{[^x]*}}b"));
}

TEST(FileCheck, VariableCapturedAndReused) {
  EXPECT_TRUE(FileCheck(kText, "CHECK: [[P:p0\\.[0-9]+]] = f32[8]{0} parameter(0)\n"
                               "CHECK: [[N:[a-z0-9.]+]] = f32[8]{0} negate([[P]])\n"
                               "CHECK: add([[N]], [[P]])"));
}

TEST(FileCheck, VariableMismatchFails) {
  const AssertionResult result = FileCheck(kText, "CHECK: [[N:neg\\.[0-9]+]] = \n"
                                                  "CHECK: ROOT {{.*}} add([[N]], [[N]])");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "with \"N\" equal to \"neg.2\""));
}

TEST(FileCheck, VariableReusedInSamePattern) {
  EXPECT_TRUE(FileCheck("add(x.1, x.1)", "CHECK: add([[X:[a-z0-9.]+]], [[X]])"));
  EXPECT_FALSE(FileCheck("add(x.1, y.2)", "CHECK: add([[X:[a-z0-9.]+]], [[X]])"));
}

TEST(FileCheck, VariableRegexWithGroupsKeepsNumbering) {
  // Groups inside a regex must not shift which group a variable reads.
  EXPECT_TRUE(FileCheck("a1 b2 b2", "CHECK: {{(a)([0-9])}} [[V:(b)[0-9]]] [[V]]"));
  EXPECT_FALSE(FileCheck("a1 b2 b3", "CHECK: {{(a)([0-9])}} [[V:(b)[0-9]]] [[V]]"));
}

TEST(FileCheck, VariableWithBracketsInRegex) {
  EXPECT_TRUE(FileCheck("x.17 y x.17", "CHECK: [[X:x.[0-9]+]] y [[X]]"));
}

TEST(FileCheck, VariableValueIsMatchedLiterally) {
  // The bound value "a.b" must not match "axb" as a regex would.
  EXPECT_FALSE(FileCheck("a.b = 1\naxb", "CHECK: [[V:a.b]] =\nCHECK: [[V]]"));
}

TEST(FileCheck, UndefinedVariableIsAnError) {
  const AssertionResult result = FileCheck(kText, "CHECK: [[NOPE]]");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "'NOPE' is used but was never defined"));
}

TEST(FileCheck, MalformedChecksAreErrors) {
  EXPECT_FALSE(FileCheck(kText, ""));                  // no directive
  EXPECT_FALSE(FileCheck(kText, "just a comment"));    // no directive
  EXPECT_FALSE(FileCheck(kText, "CHECK:"));            // empty pattern
  EXPECT_FALSE(FileCheck(kText, "CHECK: {{[0-9}}"));   // bad regex
  EXPECT_FALSE(FileCheck(kText, "CHECK: {{x"));        // unclosed block
  EXPECT_FALSE(FileCheck(kText, "CHECK: [[X:a"));      // unclosed variable
  EXPECT_FALSE(FileCheck(kText, "CHECK: [[1X:a]]"));   // bad variable name
  EXPECT_FALSE(FileCheck(kText, "CHECK-NEXT: ROOT"));  // nothing to follow
  EXPECT_FALSE(FileCheck(kText, "CHECK-SAME: ROOT"));  // nothing to follow
}

TEST(FileCheck, MisspeltDirectiveIsAnError) {
  // A typo must not silently drop the check.
  const AssertionResult result = FileCheck(kText, "CHECK: ENTRY\nCHECK-NXT: ROOT");
  EXPECT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "unknown directive 'CHECK-NXT:'"));
  EXPECT_FALSE(FileCheck(kText, "CHECK: ENTRY\nCHECK-NOT : while"));
}

TEST(FileCheck, PrefixMustStartAWord) {
  // "XCHECK:" is not a directive; with only it, there are none.
  EXPECT_FALSE(FileCheck(kText, "XCHECK: nothing-like-this"));
}

TEST(FileCheck, FailureIncludesInput) {
  const AssertionResult result = FileCheck(kText, "CHECK: absent");
  EXPECT_TRUE(Contains(result.message(), "input was:\n" + std::string(kText)));
}

}  // namespace
