// FileCheck-style matching of text (printed HLO) against check directives,
// after LLVM's FileCheck tool:
//
//   EXPECT_TRUE(FileCheck(printed, R"(
//     CHECK:      [[X:[a-z0-9.]+]] = f32[8]{0} parameter(0)
//     CHECK-NEXT: ROOT {{.*}} = f32[8]{0} negate([[X]])
//     CHECK-NOT:  copy(
//   )"));
//
// Directives (anywhere on a line of `checks`, so "// CHECK:" works too):
//   CHECK:       the pattern occurs after the previous match.
//   CHECK-NEXT:  ... on the line right after the previous match's line.
//   CHECK-SAME:  ... on the same line as the previous match, after it.
//   CHECK-NOT:   the pattern does not occur between the previous match and
//                the next positive match (or the end of the text).
//   CHECK-DAG:   consecutive DAG directives match in any order, after the
//                previous match, without overlapping one another.
// Inside a pattern, text is literal except:
//   {{regex}}        an ECMAScript regular expression;
//   [[NAME:regex]]   matches regex and binds NAME to the matched text;
//   [[NAME]]         the text NAME was bound to (earlier in this pattern or
//                    by an earlier directive).
// A run of spaces or tabs in a pattern matches any run of spaces or tabs. A
// pattern never matches across a line break.
//
// A failure says which directive (its line in `checks`) failed and shows the
// text near where it failed. A malformed directive (empty pattern, bad
// regex, unknown variable, misspelt CHECK-suffix, no directives at all) is a
// failure too, so that a typo cannot make a check pass vacuously.
#ifndef EXLA_TESTS_CC_FILECHECK_H_
#define EXLA_TESTS_CC_FILECHECK_H_

#include <string>

#include "tests/cc/test_harness.h"

namespace exla_test {

AssertionResult FileCheck(const std::string& input, const std::string& checks);

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_FILECHECK_H_
