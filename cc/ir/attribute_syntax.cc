#include "ir/attribute_syntax.h"

#include <cctype>
#include <initializer_list>

namespace exla {
namespace {

constexpr size_t kFine = std::string_view::npos;

// Offset of the first character that breaks `{int, int, ...}`, or kFine.
size_t IntListError(std::string_view v) {
  if (v.empty() || v.front() != '{') return 0;
  if (v.back() != '}') return v.size() - 1;
  bool expect_digit = true, any = false;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    char c = v[i];
    if (c == ' ') continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      expect_digit = false;
      any = true;
    } else if (c == ',' && !expect_digit) {
      expect_digit = true;
    } else {
      return i;
    }
  }
  return (any && expect_digit) ? v.size() - 1 : kFine;
}

bool IsNonNegativeInteger(std::string_view v) {
  bool ok = !v.empty();
  for (char c : v) ok &= std::isdigit(static_cast<unsigned char>(c)) != 0;
  return ok;
}

// `{[start:limit], [start:limit:stride], ...}`: offset of the first
// character that cannot be part of it, or kFine.
size_t SliceError(std::string_view v) {
  if (v.size() < 2 || v.front() != '{' || v.back() != '}') return 0;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    char c = v[i];
    bool ok = std::isdigit(static_cast<unsigned char>(c)) || c == '[' || c == ']' || c == ':' ||
              c == ',' || c == ' ' || c == '-';
    if (!ok) return i;
  }
  return kFine;
}

// `{name="value", ...}`: XLA's parser wants a quoted string for each value.
// Offset of the first character that breaks it, or kFine.
size_t FrontendAttributesError(std::string_view v) {
  if (v.empty() || v.front() != '{' || v.back() != '}') return 0;
  size_t i = 1;
  auto skip_blanks = [&] { while (i + 1 < v.size() && v[i] == ' ') ++i; };
  auto name_char = [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  };
  skip_blanks();
  for (bool first = true; i + 1 < v.size(); first = false) {
    if (!first) {
      if (v[i] != ',') return i;
      ++i;
      skip_blanks();
    }
    const size_t name = i;
    while (i + 1 < v.size() && name_char(v[i])) ++i;
    if (i == name || v[i] != '=') return i;
    ++i;
    if (v[i] != '"') return i;
    ++i;
    while (i + 1 < v.size() && v[i] != '"') i += v[i] == '\\' ? 2 : 1;
    if (i + 1 >= v.size()) return i;
    ++i;  // closing quote
    skip_blanks();
  }
  return kFine;
}

bool In(const std::string& key, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (key == k) return true;
  }
  return false;
}

}  // namespace

std::optional<AttributeSyntaxError> CheckTypedAttribute(const std::string& key,
                                                        std::string_view value) {
  if (In(key, {"dimensions", "dynamic_slice_sizes", "lhs_contracting_dims",
               "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims"})) {
    const size_t bad = IntListError(value);
    if (bad == kFine) return std::nullopt;
    return AttributeSyntaxError{bad, "attribute '" + key + "' must be a list of integers like {0,1}"};
  }
  if (In(key, {"index", "iota_dimension"})) {
    if (IsNonNegativeInteger(value)) return std::nullopt;
    return AttributeSyntaxError{0, "attribute '" + key + "' must be a non-negative integer"};
  }
  if (key == "slice") {
    const size_t bad = SliceError(value);
    if (bad == kFine) return std::nullopt;
    return AttributeSyntaxError{bad, "attribute 'slice' must look like {[0:4], [1:3:2]}"};
  }
  if (key == "frontend_attributes") {
    const size_t bad = FrontendAttributesError(value);
    if (bad == kFine) return std::nullopt;
    return AttributeSyntaxError{bad, "attribute 'frontend_attributes' must look like "
                                     "{name=\"value\", ...}"};
  }
  return std::nullopt;
}

}  // namespace exla
