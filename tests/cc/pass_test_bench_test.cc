// Tests of the pass test bench (tests/cc/pass_test_bench.h): its "must not
// change" assertion must catch a change, and it must report what a pass said.
#include "tests/cc/pass_test_bench.h"

#include <stdexcept>
#include <string>

#include "tests/cc/test_harness.h"

namespace {

using exla_test::AssertionResult;
using exla_test::CountOccurrences;
using exla_test::HasMessage;
using exla_test::PassLeavesUnchanged;
using exla_test::PassRun;
using exla_test::RunPass;
using exla_test::RunPassOnText;

bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

constexpr char kDead[] = R"(HloModule m

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  dead = f32[8]{0} negate(p0)
  ROOT r = f32[8]{0} exponential(p0)
}
)";

TEST(PassTestBench, RunPassRunsOnlyThatPass) {
  // The caller's pass list is replaced: only dce runs.
  exla::Options options;
  options.passes = {"remove-copies"};
  const PassRun run = RunPass("dce", kDead, options);
  EXPECT_TRUE(run.changed);
  EXPECT_FALSE(Contains(run.text, "dead"));
  EXPECT_EQ(RunPassOnText("dce", kDead), run.text);
}

TEST(PassTestBench, UnchangedDetectsAChange) {
  const AssertionResult result = PassLeavesUnchanged("dce", kDead);
  EXPECT_FALSE(result);
  // The failure shows the line the pass removed.
  EXPECT_TRUE(Contains(result.message(), "-   dead = f32[8]{0} negate(p0)"))
      << result.message();
}

TEST(PassTestBench, UnchangedAcceptsUntouchedModule) {
  // Whitespace differences from the printer do not count as a change.
  EXPECT_TRUE(PassLeavesUnchanged("dce", "HloModule m\nENTRY main {\n p0 = f32[8]{0} "
                                         "parameter(0)\n ROOT r = f32[8]{0} negate(p0)\n}\n"));
}

TEST(PassTestBench, HasMessageListsMessagesOnFailure) {
  PassRun run;
  run.messages = {"first reason", "second reason"};
  EXPECT_TRUE(HasMessage(run, "second"));
  const AssertionResult missing = HasMessage(run, "third");
  EXPECT_FALSE(missing);
  EXPECT_TRUE(Contains(missing.message(), "first reason"));
  EXPECT_FALSE(HasMessage(PassRun(), "anything"));
}

TEST(PassTestBench, BadInputThrows) {
  EXPECT_THROW(RunPass("no-such-pass", kDead), std::invalid_argument);
  EXPECT_THROW(RunPass("dce", "HloModule m\nENTRY main {\n  x = f32[2 parameter(0)\n}\n"),
               std::invalid_argument);
}

TEST(PassTestBench, CountOccurrences) {
  EXPECT_EQ(CountOccurrences("a while( b while( c", "while("), 2);
  EXPECT_EQ(CountOccurrences("aaaa", "aa"), 2);  // non-overlapping
  EXPECT_EQ(CountOccurrences("abc", ""), 0);
}

}  // namespace
