#include "ir/attribute_syntax.h"

#include <cctype>

namespace exla {

std::optional<AttributeSyntaxError> CheckTypedAttribute(const std::string& key,
                                                        std::string_view value) {
  static const char* kIntLists[] = {"dimensions", "dynamic_slice_sizes", "lhs_contracting_dims",
                                    "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims"};
  static const char* kInts[] = {"index", "iota_dimension"};
  // Offset of the first character that breaks `{int, int, ...}`, or npos.
  auto int_list_error = [](std::string_view v) -> size_t {
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
    return (any && expect_digit) ? v.size() - 1 : std::string_view::npos;
  };
  for (const char* k : kIntLists) {
    if (key != k) continue;
    size_t bad = int_list_error(value);
    if (bad != std::string_view::npos) {
      return AttributeSyntaxError{bad,
                                  "attribute '" + key + "' must be a list of integers like {0,1}"};
    }
  }
  for (const char* k : kInts) {
    if (key != k) continue;
    bool ok = !value.empty();
    for (char c : value) ok &= std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!ok) {
      return AttributeSyntaxError{0, "attribute '" + key + "' must be a non-negative integer"};
    }
  }
  if (key == "slice") {
    // {[start:limit], [start:limit:stride], ...}
    size_t bad = value.size() >= 2 && value.front() == '{' && value.back() == '}'
                     ? std::string_view::npos
                     : 0;
    for (size_t i = 1; bad == std::string_view::npos && i + 1 < value.size(); ++i) {
      char c = value[i];
      bool ok = std::isdigit(static_cast<unsigned char>(c)) || c == '[' || c == ']' ||
                c == ':' || c == ',' || c == ' ' || c == '-';
      if (!ok) bad = i;
    }
    if (bad != std::string_view::npos) {
      return AttributeSyntaxError{bad, "attribute 'slice' must look like {[0:4], [1:3:2]}"};
    }
  }
  if (key == "frontend_attributes") {
    // {name="value", ...}: XLA's parser wants a quoted string for each value.
    size_t i = 0;
    auto fail = [&](size_t at) {
      return AttributeSyntaxError{at, "attribute 'frontend_attributes' must look like "
                                      "{name=\"value\", ...}"};
    };
    if (value.empty() || value.front() != '{' || value.back() != '}') return fail(0);
    i = 1;
    auto skip_blanks = [&] { while (i + 1 < value.size() && value[i] == ' ') ++i; };
    skip_blanks();
    bool first = true;
    while (i + 1 < value.size()) {
      if (!first) {
        if (value[i] != ',') return fail(i);
        ++i;
        skip_blanks();
      }
      first = false;
      size_t name = i;
      while (i + 1 < value.size() && (std::isalnum(static_cast<unsigned char>(value[i])) ||
                                      value[i] == '_' || value[i] == '.' || value[i] == '-')) {
        ++i;
      }
      if (i == name || value[i] != '=') return fail(i);
      ++i;
      if (value[i] != '"') return fail(i);
      ++i;
      while (i + 1 < value.size() && value[i] != '"') i += value[i] == '\\' ? 2 : 1;
      if (i + 1 >= value.size()) return fail(i);
      ++i;  // closing quote
      skip_blanks();
    }
  }
  return std::nullopt;
}

}  // namespace exla
