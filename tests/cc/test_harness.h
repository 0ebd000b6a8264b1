// A small test harness for exla's C++ tests, in C++17 with no dependency.
//
//   TEST(Dce, RemovesDeadInstruction) {
//     EXPECT_EQ(a, b);                      // reports file:line and goes on
//     ASSERT_TRUE(ptr != nullptr);          // reports and ends this test
//     EXPECT_TRUE(FileCheck(text, checks)) << "context";
//   }
//
// Tests register themselves; test_harness.cc holds main(), which runs them
// (optionally only those matching --filter=Suite.* ), prints one line per
// test and a final "N passed, M failed" line, and exits non-zero if any test
// failed. Every assertion accepts extra context with <<.
//
// A check that is more than a comparison (FileCheck, "the pass left the module
// unchanged") returns an AssertionResult: true or false plus a message that
// says why, which EXPECT_TRUE prints when it is false.
#ifndef EXLA_TESTS_CC_TEST_HARNESS_H_
#define EXLA_TESTS_CC_TEST_HARNESS_H_

#include <exception>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace exla_test {

// The outcome of a check with the reason it failed.
class AssertionResult {
 public:
  static AssertionResult Success() { return AssertionResult(true, ""); }
  static AssertionResult Failure(std::string message) {
    return AssertionResult(false, std::move(message));
  }
  explicit operator bool() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  AssertionResult(bool ok, std::string message) : ok_(ok), message_(std::move(message)) {}
  bool ok_;
  std::string message_;
};

// Registers a test; used by TEST(). Returns a dummy so that registration can
// initialise a namespace-scope variable.
int RegisterTest(const char* suite, const char* name, void (*body)(), const char* file,
                 int line);

// Runs the registered tests. Arguments: --filter=PATTERN (':'-separated glob
// patterns over "Suite.Name"; after a '-', patterns to exclude, as gtest), --list.
int RunTests(int argc, char** argv);

namespace internal {

// Thrown by a failed ASSERT_*: ends the current test, which is already marked
// failed. Derives from nothing so that a test's catch (std::exception&) does
// not swallow it.
struct FatalFailure {};

// Whether `filter` (see RunTests) selects the test named "Suite.Name".
bool FilterAccepts(const std::string& filter, const std::string& full_name);

// Records a failure of the running test: "file:line: message".
void ReportFailure(const char* file, int line, const std::string& message);

// Extra context streamed into an assertion with <<.
class Message {
 public:
  template <typename T>
  Message& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  std::string str() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
};

// `Reporter(...) = Message() << ...` reports once the whole message is built.
class Reporter {
 public:
  Reporter(const char* file, int line, std::string message, bool fatal)
      : file_(file), line_(line), message_(std::move(message)), fatal_(fatal) {}
  void operator=(const Message& extra) const;

 private:
  const char* file_;
  int line_;
  std::string message_;
  bool fatal_;
};

template <typename T, typename = void>
struct IsPrintable : std::false_type {};
template <typename T>
struct IsPrintable<T, std::void_t<decltype(std::declval<std::ostream&>()
                                           << std::declval<const T&>())>>
    : std::true_type {};

std::string QuoteString(const std::string& s);

// How a value appears in a failure message.
template <typename T>
std::string Describe(const T& value) {
  if constexpr (std::is_convertible_v<const T&, std::string>) {
    return QuoteString(std::string(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (IsPrintable<T>::value) {
    std::ostringstream out;
    out << value;
    return out.str();
  } else {
    return "<" + std::to_string(sizeof(T)) + "-byte object>";
  }
}

inline AssertionResult CheckTrue(const AssertionResult& result, const char* text,
                                 bool expected) {
  if (static_cast<bool>(result) == expected) return AssertionResult::Success();
  std::string message = std::string("Value of: ") + text + "\n  Expected: " +
                        (expected ? "true" : "false");
  if (!result.message().empty()) message += "\n" + result.message();
  return AssertionResult::Failure(message);
}

template <typename T>
AssertionResult CheckTrue(const T& value, const char* text, bool expected) {
  if (static_cast<bool>(value) == expected) return AssertionResult::Success();
  return AssertionResult::Failure(std::string("Value of: ") + text + "\n  Actual: " +
                                  (expected ? "false" : "true") +
                                  "\n  Expected: " + (expected ? "true" : "false"));
}

// Compares `a op b`; `op_text` is how the operator reads in a message.
template <typename A, typename B, typename Op>
AssertionResult Compare(const A& a, const B& b, const char* a_text, const char* b_text,
                        const char* op_text, Op op) {
  if (op(a, b)) return AssertionResult::Success();
  return AssertionResult::Failure(std::string("Expected: (") + a_text + ") " + op_text +
                                  " (" + b_text + ")\n  " + a_text + ": " + Describe(a) +
                                  "\n  " + b_text + ": " + Describe(b));
}

}  // namespace internal
}  // namespace exla_test

// The switch keeps `if (x) EXPECT_TRUE(y); else ...` from binding the else to
// the macro's if.
#define EXLA_TEST_CHECK_(result_expr, fatal)                                         \
  switch (0)                                                                         \
  case 0:                                                                            \
  default:                                                                           \
    if (const ::exla_test::AssertionResult exla_test_result_ = (result_expr)) {      \
    } else                                                                           \
      ::exla_test::internal::Reporter(__FILE__, __LINE__, exla_test_result_.message(), \
                                      fatal) = ::exla_test::internal::Message()

#define EXLA_TEST_NAME_(suite, name) suite##_##name##_ExlaTest

#define TEST(suite, name)                                                            \
  static void EXLA_TEST_NAME_(suite, name)();                                        \
  [[maybe_unused]] static const int EXLA_TEST_NAME_(suite, name##_registered) =     \
      ::exla_test::RegisterTest(#suite, #name, &EXLA_TEST_NAME_(suite, name), __FILE__, \
                                __LINE__);                                           \
  static void EXLA_TEST_NAME_(suite, name)()

#define EXLA_TEST_BOOL_(cond, expected, fatal) \
  EXLA_TEST_CHECK_(::exla_test::internal::CheckTrue((cond), #cond, expected), fatal)

#define EXPECT_TRUE(cond) EXLA_TEST_BOOL_(cond, true, false)
#define EXPECT_FALSE(cond) EXLA_TEST_BOOL_(cond, false, false)
#define ASSERT_TRUE(cond) EXLA_TEST_BOOL_(cond, true, true)
#define ASSERT_FALSE(cond) EXLA_TEST_BOOL_(cond, false, true)

#define EXLA_TEST_CMP_(a, b, op, fatal)                                              \
  EXLA_TEST_CHECK_(::exla_test::internal::Compare(                                   \
                       (a), (b), #a, #b, #op,                                        \
                       [](const auto& x, const auto& y) { return x op y; }),         \
                   fatal)

#define EXPECT_EQ(a, b) EXLA_TEST_CMP_(a, b, ==, false)
#define EXPECT_NE(a, b) EXLA_TEST_CMP_(a, b, !=, false)
#define EXPECT_LT(a, b) EXLA_TEST_CMP_(a, b, <, false)
#define EXPECT_LE(a, b) EXLA_TEST_CMP_(a, b, <=, false)
#define EXPECT_GT(a, b) EXLA_TEST_CMP_(a, b, >, false)
#define EXPECT_GE(a, b) EXLA_TEST_CMP_(a, b, >=, false)
#define ASSERT_EQ(a, b) EXLA_TEST_CMP_(a, b, ==, true)
#define ASSERT_NE(a, b) EXLA_TEST_CMP_(a, b, !=, true)
#define ASSERT_LT(a, b) EXLA_TEST_CMP_(a, b, <, true)
#define ASSERT_LE(a, b) EXLA_TEST_CMP_(a, b, <=, true)
#define ASSERT_GT(a, b) EXLA_TEST_CMP_(a, b, >, true)
#define ASSERT_GE(a, b) EXLA_TEST_CMP_(a, b, >=, true)

// EXPECT_THROW(statement, type): `statement` throws `type` (or a subclass).
#define EXLA_TEST_THROW_(statement, type, fatal)                                     \
  EXLA_TEST_CHECK_(                                                                  \
      ([&]() -> ::exla_test::AssertionResult {                                       \
        try {                                                                        \
          statement;                                                                 \
        } catch (const type&) {                                                      \
          return ::exla_test::AssertionResult::Success();                            \
        } catch (...) {                                                              \
          return ::exla_test::AssertionResult::Failure(                              \
              "Expected: " #statement " throws " #type "\n  Actual: it throws another type"); \
        }                                                                            \
        return ::exla_test::AssertionResult::Failure(                                \
            "Expected: " #statement " throws " #type "\n  Actual: it throws nothing");  \
      })(),                                                                          \
      fatal)

#define EXPECT_THROW(statement, type) EXLA_TEST_THROW_(statement, type, false)
#define ASSERT_THROW(statement, type) EXLA_TEST_THROW_(statement, type, true)

#define EXLA_TEST_NO_THROW_(statement, fatal)                                        \
  EXLA_TEST_CHECK_(                                                                  \
      ([&]() -> ::exla_test::AssertionResult {                                       \
        try {                                                                        \
          statement;                                                                 \
        } catch (const std::exception& e) {                                          \
          return ::exla_test::AssertionResult::Failure(                              \
              std::string("Expected: " #statement " throws nothing\n  Actual: ") +   \
              e.what());                                                             \
        } catch (...) {                                                              \
          return ::exla_test::AssertionResult::Failure(                              \
              "Expected: " #statement " throws nothing\n  Actual: it throws");       \
        }                                                                            \
        return ::exla_test::AssertionResult::Success();                              \
      })(),                                                                          \
      fatal)

#define EXPECT_NO_THROW(statement) EXLA_TEST_NO_THROW_(statement, false)
#define ASSERT_NO_THROW(statement) EXLA_TEST_NO_THROW_(statement, true)

// Fails the current test unconditionally.
#define ADD_FAILURE() EXLA_TEST_CHECK_(::exla_test::AssertionResult::Failure("Failed"), false)
#define FAIL() EXLA_TEST_CHECK_(::exla_test::AssertionResult::Failure("Failed"), true)

#endif  // EXLA_TESTS_CC_TEST_HARNESS_H_
