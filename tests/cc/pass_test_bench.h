// Runs one exla pass on a short HLO module written as text, for tests of a
// single rewrite rule:
//
//   TEST(Dce, RemovesDeadInstruction) {
//     const PassRun run = RunPass("dce", kModule);
//     EXPECT_TRUE(run.changed);
//     EXPECT_TRUE(FileCheck(run.text, "CHECK-NOT: dead.3 ="));
//   }
//   TEST(Dce, KeepsLiveModule) { ExpectUnchanged("dce", kLiveModule); }
//
// RunPass uses only the public API (api/exla.h): the pass is selected by
// name in Options::passes, and what it did comes back as printed HLO and the
// PassRecord. So these tests pin behaviour, not the IR classes, and survive
// refactorings of the passes' internals. RunPassObject runs a pass object
// built by the test and hands back the module itself, for matching its
// structure with the passes' own pattern matcher (XLA's GmockMatch style):
//
//   TensorSplitter splitter(4096, 2048);
//   const ModuleRun run = RunPassObject(splitter, kModule);
//   EXPECT_TRUE(Match(run.module->entry()->root(),
//                     m::GetTupleElement(m::While(m::Tuple()))));
//
// Every pass output goes through the IR verifier (ir/verifier.h), and a
// malformed one fails the test that produced it.
#ifndef EXLA_TESTS_CC_PASS_TEST_BENCH_H_
#define EXLA_TESTS_CC_PASS_TEST_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "api/exla.h"
#include "ir/module.h"
#include "pass/pass.h"
#include "tests/cc/test_harness.h"

namespace exla_test {

// What running one pass produced.
struct PassRun {
  std::string text;                   // the printed module after the pass
  bool changed = false;               // the pass said it changed the module
  std::vector<std::string> messages;  // what it left alone and why
  exla::PassRecord record;            // the pass's record, typed results included
};

// Runs `pass_name` alone on `hlo_text` (the Options' own pass list is
// replaced). Throws std::invalid_argument on malformed text or an unknown pass.
PassRun RunPass(const std::string& pass_name, const std::string& hlo_text,
                const exla::Options& options = exla::Options());

// What running a pass object produced: the module itself.
struct ModuleRun {
  std::unique_ptr<exla::HloModule> module;  // after the pass, verified
  bool changed = false;
  exla::PassRecord record;
};

// Parses `hlo_text`, runs `pass` on it and verifies the result (throws
// std::runtime_error naming the pass when the output is malformed).
ModuleRun RunPassObject(exla::HloPass& pass, const std::string& hlo_text);

// The printed module after `pass_name` ran on `hlo_text`.
std::string RunPassOnText(const std::string& pass_name, const std::string& hlo_text,
                          const exla::Options& options = exla::Options());

// Success iff the pass left the module exactly as the parser and printer
// alone would (RoundTripHloText) and did not report a change.
AssertionResult PassLeavesUnchanged(const std::string& pass_name, const std::string& hlo_text,
                                    const exla::Options& options = exla::Options());

// "Must not change" as its own assertion: a failure is reported at the
// caller's file:line (GCC's and Clang's __builtin_FILE/__builtin_LINE as
// default arguments, C++17 having no std::source_location) with a line diff
// of what the pass changed. Returns whether the check passed.
bool ExpectUnchanged(const std::string& pass_name, const std::string& hlo_text,
                     const exla::Options& options = exla::Options(),
                     const char* file = __builtin_FILE(), int line = __builtin_LINE());

// Success iff one of `run.messages` contains `fragment`; the failure lists
// the messages there were.
AssertionResult HasMessage(const PassRun& run, const std::string& fragment);

// Options with both size thresholds set, in bytes, so that rules meant for
// large tensors fire on a test's tiny ones.
exla::Options SizeOptions(int64_t tensor_size_threshold, int64_t tensor_split_size);

// Number of non-overlapping occurrences of `needle` in `text`.
int CountOccurrences(const std::string& text, const std::string& needle);

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_PASS_TEST_BENCH_H_
