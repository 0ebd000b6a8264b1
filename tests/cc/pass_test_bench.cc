#include "tests/cc/pass_test_bench.h"

#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/verifier.h"

namespace exla_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The lines only one side has, prefixed "- " (before) and "+ " (after),
// after dropping the common head and tail: enough to see what a pass touched
// in a module of a few dozen lines.
std::string LineDiff(const std::string& before, const std::string& after) {
  const std::vector<std::string> a = Lines(before);
  const std::vector<std::string> b = Lines(after);
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  std::string out;
  for (size_t i = head; i < a.size() - tail; ++i) out += "- " + a[i] + "\n";
  for (size_t i = head; i < b.size() - tail; ++i) out += "+ " + b[i] + "\n";
  return out;
}

}  // namespace

PassRun RunPass(const std::string& pass_name, const std::string& hlo_text,
                const exla::Options& options) {
  exla::Options one_pass = options;
  one_pass.passes = {pass_name};
  std::vector<exla::PassRecord> records;
  PassRun run;
  run.text = exla::OptimizeHloText(hlo_text, one_pass, &records);
  // Every pass output must be a module XLA would accept: a rule that builds
  // a wrong shape or a dangling operand fails its test here, by name, rather
  // than later inside XLA. The verifier is the one the public API runs on
  // every input.
  std::vector<exla::VerifierError> errors = exla::VerifyModule(*exla::ParseHloModule(run.text));
  if (!errors.empty()) {
    throw std::runtime_error(pass_name + " produced a malformed module: " +
                             errors.front().ToString() + "\n" + run.text);
  }
  for (const exla::PassRecord& record : records) {
    run.changed = run.changed || record.changed;
    run.messages.insert(run.messages.end(), record.messages.begin(), record.messages.end());
  }
  if (!records.empty()) run.record = records.front();
  return run;
}

ModuleRun RunPassObject(exla::HloPass& pass, const std::string& hlo_text) {
  ModuleRun run;
  run.module = exla::ParseHloModule(hlo_text);
  run.changed = pass.Run(run.module.get());
  run.record = pass.TakeRecord();
  std::vector<exla::VerifierError> errors = exla::VerifyModule(*run.module);
  if (!errors.empty()) {
    throw std::runtime_error(std::string(pass.name()) + " produced a malformed module: " +
                             errors.front().ToString());
  }
  return run;
}

std::string RunPassOnText(const std::string& pass_name, const std::string& hlo_text,
                          const exla::Options& options) {
  return RunPass(pass_name, hlo_text, options).text;
}

AssertionResult PassLeavesUnchanged(const std::string& pass_name, const std::string& hlo_text,
                                    const exla::Options& options) {
  const std::string expected = exla::RoundTripHloText(hlo_text);
  const PassRun run = RunPass(pass_name, hlo_text, options);
  if (run.text != expected) {
    return AssertionResult::Failure("pass '" + pass_name +
                                    "' changed the module; lines before (-) and after (+):\n" +
                                    LineDiff(expected, run.text));
  }
  if (run.changed) {
    return AssertionResult::Failure("pass '" + pass_name +
                                    "' printed the same module but reported a change");
  }
  return AssertionResult::Success();
}

bool ExpectUnchanged(const std::string& pass_name, const std::string& hlo_text,
                     const exla::Options& options, const char* file, int line) {
  AssertionResult result = AssertionResult::Failure("");
  try {
    result = PassLeavesUnchanged(pass_name, hlo_text, options);
  } catch (const std::exception& e) {
    result = AssertionResult::Failure("pass '" + pass_name + "' threw: " + e.what());
  }
  if (!result) internal::ReportFailure(file, line, "Expected unchanged: " + result.message());
  return static_cast<bool>(result);
}

AssertionResult HasMessage(const PassRun& run, const std::string& fragment) {
  for (const std::string& message : run.messages) {
    if (message.find(fragment) != std::string::npos) return AssertionResult::Success();
  }
  std::string listed;
  for (const std::string& message : run.messages) listed += "\n    " + message;
  return AssertionResult::Failure("no pass message contains \"" + fragment + "\"; messages:" +
                                  (listed.empty() ? std::string(" (none)") : listed));
}

exla::Options SizeOptions(int64_t tensor_size_threshold, int64_t tensor_split_size) {
  exla::Options options;
  options.tensor_size_threshold = tensor_size_threshold;
  options.tensor_split_size = tensor_split_size;
  return options;
}

int CountOccurrences(const std::string& text, const std::string& needle) {
  if (needle.empty()) return 0;
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace exla_test
