#include "xla/service/exla/exla_size.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace xla {
namespace {

char ToLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
  }
  return true;
}

// Returns the multiplier of `unit` ("" means bytes), or 0 if unknown.
int64_t UnitMultiplier(std::string_view unit) {
  struct Unit {
    const char* name;
    int64_t multiplier;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"kb", 1000},
      {"mb", 1000 * 1000},
      {"gb", int64_t{1000} * 1000 * 1000},
      {"kib", 1024},
      {"mib", 1024 * 1024},
      {"gib", int64_t{1024} * 1024 * 1024},
  };
  for (const Unit& u : kUnits) {
    if (EqualsIgnoreCase(unit, u.name)) return u.multiplier;
  }
  return 0;
}

}  // namespace

std::optional<int64_t> ParseExlaSize(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  const int64_t multiplier = UnitMultiplier(text.substr(digits));
  if (multiplier == 0) return std::nullopt;

  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    const int64_t digit = text[i] - '0';
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value > kMax / multiplier) return std::nullopt;
  return value * multiplier;
}

}  // namespace xla
