// Self-check of xla/service/exla/exla_size.cc (the size syntax the patched
// XLA accepts for --xla_tensor_size_threshold / --xla_tensor_split_size).
// Built and run by xla_patches/check_syntax.sh; exits non-zero on failure.

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>

#include "xla/service/exla/exla_size.h"

namespace {

int failures = 0;

void Expect(std::string_view text, std::optional<int64_t> want) {
  const std::optional<int64_t> got = xla::ParseExlaSize(text);
  if (got == want) return;
  ++failures;
  std::fprintf(stderr, "ParseExlaSize(\"%.*s\") = %s%lld, want %s%lld\n",
               static_cast<int>(text.size()), text.data(),
               got ? "" : "invalid ", got ? static_cast<long long>(*got) : 0LL,
               want ? "" : "invalid ",
               want ? static_cast<long long>(*want) : 0LL);
}

}  // namespace

int main() {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Plain bytes.
  Expect("0", 0);
  Expect("123", 123);
  Expect("007", 7);
  // Decimal units.
  Expect("100KB", 100000);
  Expect("100MB", 100000000);
  Expect("1GB", 1000000000);
  // Binary units.
  Expect("100KiB", 102400);
  Expect("1MiB", 1048576);
  Expect("1GiB", 1073741824);
  // Case does not matter.
  Expect("1gb", 1000000000);
  Expect("1gib", 1073741824);
  Expect("2Mb", 2000000);
  Expect("3KIB", 3072);
  // Limits.
  Expect("9223372036854775807", kMax);
  Expect("9223372036854775808", std::nullopt);
  Expect("8589934591GiB", int64_t{8589934591} * 1073741824);
  Expect("8589934592GiB", std::nullopt);
  // Not sizes.
  Expect("", std::nullopt);
  Expect("GB", std::nullopt);
  Expect("-1", std::nullopt);
  Expect("+1", std::nullopt);
  Expect("1.5GB", std::nullopt);
  Expect("1 GB", std::nullopt);
  Expect(" 1GB", std::nullopt);
  Expect("1GB ", std::nullopt);
  Expect("1B", std::nullopt);
  Expect("1TB", std::nullopt);
  Expect("1K", std::nullopt);
  Expect("1GiBs", std::nullopt);
  Expect("0x10", std::nullopt);
  if (failures != 0) {
    std::fprintf(stderr, "exla_size self-check: %d failures\n", failures);
    return 1;
  }
  return 0;
}
