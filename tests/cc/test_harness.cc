// The test runner of test_harness.h, and main() for every test binary.
#include "tests/cc/test_harness.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace exla_test {
namespace {

struct TestCase {
  std::string suite;
  std::string name;
  void (*body)();
  const char* file;
  int line;
  std::string FullName() const { return suite + "." + name; }
};

// A function-local static: tests register during static initialisation, in
// an order between files that C++ does not define.
std::vector<TestCase>& Registry() {
  static std::vector<TestCase> tests;
  return tests;
}

// Failures of the test that is running.
int g_current_failures = 0;

void PrintUsage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--filter=PATTERN] [--list]\n"
               "  --filter=PATTERN  run the tests whose Suite.Name matches PATTERN: ':'-separated\n"
               "                    globs (* and ?), then optionally '-' and globs to exclude\n"
               "  --list            print the test names and exit\n",
               program);
}

}  // namespace

int RegisterTest(const char* suite, const char* name, void (*body)(), const char* file,
                 int line) {
  Registry().push_back({suite, name, body, file, line});
  return 0;
}

namespace internal {

void ReportFailure(const char* file, int line, const std::string& message) {
  ++g_current_failures;
  // On stdout, so that a failure prints just before its test's FAIL line.
  std::printf("%s:%d: Failure\n%s\n", file, line, message.c_str());
  std::fflush(stdout);
}

void Reporter::operator=(const Message& extra) const {
  std::string message = message_;
  const std::string context = extra.str();
  if (!context.empty()) message += "\n" + context;
  ReportFailure(file_, line_, message);
  if (fatal_) throw FatalFailure();
}

std::string QuoteString(const std::string& s) {
  // Multi-line text (printed HLO) is shown as it is, between lines.
  if (s.find('\n') != std::string::npos) {
    return "\n-----\n" + s + (s.empty() || s.back() != '\n' ? "\n" : "") + "-----";
  }
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Glob match with '*' (any run) and '?' (one character).
static bool GlobMatch(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') {
    for (const char* t = text;; ++t) {
      if (GlobMatch(pattern + 1, t)) return true;
      if (*t == '\0') return false;
    }
  }
  if (*text == '\0') return false;
  if (*pattern == '?' || *pattern == *text) return GlobMatch(pattern + 1, text + 1);
  return false;
}

static bool MatchesAny(const std::string& patterns, const std::string& name) {
  size_t start = 0;
  while (start <= patterns.size()) {
    size_t end = patterns.find(':', start);
    if (end == std::string::npos) end = patterns.size();
    const std::string pattern = patterns.substr(start, end - start);
    if (!pattern.empty() && GlobMatch(pattern.c_str(), name.c_str())) return true;
    start = end + 1;
  }
  return false;
}

// gtest's filter syntax: "POSITIVE[-NEGATIVE]", each a ':'-separated list of
// globs; an empty positive part means every test.
bool FilterAccepts(const std::string& filter, const std::string& name) {
  const size_t dash = filter.find('-');
  const std::string positive = filter.substr(0, dash);
  const std::string negative = dash == std::string::npos ? "" : filter.substr(dash + 1);
  if (!positive.empty() && !MatchesAny(positive, name)) return false;
  return !MatchesAny(negative, name);
}

}  // namespace internal

int RunTests(int argc, char** argv) {
  std::string filter;
  // `bazel test --test_filter=...` passes the filter in this variable.
  if (const char* bazel_filter = std::getenv("TESTBRIDGE_TEST_ONLY")) filter = bazel_filter;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--filter=", 0) == 0) {
      filter = arg.substr(std::strlen("--filter="));
    } else if (arg == "--list") {
      list = true;
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", arg.c_str());
      PrintUsage(argv[0]);
      return 2;
    }
  }

  std::vector<const TestCase*> selected;
  for (const TestCase& test : Registry()) {
    if (internal::FilterAccepts(filter, test.FullName())) selected.push_back(&test);
  }
  if (list) {
    for (const TestCase* test : selected) std::printf("%s\n", test->FullName().c_str());
    return 0;
  }
  if (selected.empty()) {
    // A filter that selects nothing is almost always a typo; passing would hide it.
    std::fprintf(stderr, "no test matches --filter=%s\n", filter.c_str());
    std::printf("0 passed, 0 failed\n");
    return 1;
  }

  int passed = 0;
  std::vector<std::string> failed;
  for (const TestCase* test : selected) {
    const std::string name = test->FullName();
    g_current_failures = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      test->body();
    } catch (const internal::FatalFailure&) {
      // Already reported; the ASSERT ended the test.
    } catch (const std::exception& e) {
      internal::ReportFailure(test->file, test->line,
                              "unexpected exception in " + name + ": " + e.what());
    } catch (...) {
      internal::ReportFailure(test->file, test->line,
                              "unexpected exception of unknown type in " + name);
    }
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    const bool ok = g_current_failures == 0;
    std::printf("%s %s (%.1f ms)\n", ok ? "ok  " : "FAIL", name.c_str(), ms);
    std::fflush(stdout);
    if (ok) {
      ++passed;
    } else {
      failed.push_back(name);
    }
  }
  for (const std::string& name : failed) std::printf("FAILED: %s\n", name.c_str());
  std::printf("%d passed, %zu failed\n", passed, failed.size());
  return failed.empty() ? 0 : 1;
}

}  // namespace exla_test

int main(int argc, char** argv) { return exla_test::RunTests(argc, argv); }
