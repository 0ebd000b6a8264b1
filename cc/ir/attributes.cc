#include "ir/attributes.h"

#include <cctype>
#include <cstdlib>

namespace exla {
namespace {

// Every integer in `text`, in order ("{1,0}" -> 1, 0). Only called on text
// whose syntax CheckTypedAttribute accepted.
std::vector<int64_t> ParseIntegers(std::string_view text) {
  std::vector<int64_t> values;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool negative = c == '-' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (std::isdigit(static_cast<unsigned char>(c)) || negative) {
      size_t start = i;
      ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      values.push_back(std::strtoll(std::string(text.substr(start, i - start)).c_str(), nullptr, 10));
    } else {
      ++i;
    }
  }
  return values;
}

std::vector<SliceBounds> ParseSlice(std::string_view text) {
  std::vector<SliceBounds> bounds;
  size_t pos = 0;
  while ((pos = text.find('[', pos)) != std::string_view::npos) {
    size_t end = text.find(']', pos);
    if (end == std::string_view::npos) break;
    std::vector<int64_t> values = ParseIntegers(text.substr(pos, end - pos));
    SliceBounds b;
    if (values.size() >= 2) {
      b.start = values[0];
      b.limit = values[1];
      b.stride = values.size() >= 3 ? values[2] : 1;
    }
    bounds.push_back(b);
    pos = end;
  }
  return bounds;
}

// `0_0x1_2_1`: one `low_high[_interior]` group per dimension, split on 'x'.
PaddingConfig ParsePadding(std::string_view text) {
  PaddingConfig config;
  size_t start = 0;
  while (start <= text.size()) {
    size_t x = text.find('x', start);
    std::vector<int64_t> values =
        ParseIntegers(text.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start));
    PaddingDimension d;
    if (values.size() >= 2) {
      d.low = values[0];
      d.high = values[1];
      d.interior = values.size() >= 3 ? values[2] : 0;
    }
    config.push_back(d);
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  return config;
}

constexpr std::string_view kDirectionNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};

}  // namespace

std::string_view ComparisonDirectionString(ComparisonDirection direction) {
  return kDirectionNames[static_cast<int>(direction)];
}

std::optional<ComparisonDirection> StringToComparisonDirection(std::string_view text) {
  for (int i = 0; i < 6; ++i) {
    if (kDirectionNames[i] == text) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}

TypedAttributeValue DecodeTypedAttribute(std::string_view key, std::string_view value) {
  if (key == "dimensions" || key == "dynamic_slice_sizes" || key == "lhs_contracting_dims" ||
      key == "rhs_contracting_dims" || key == "lhs_batch_dims" || key == "rhs_batch_dims") {
    return ParseIntegers(value);
  }
  if (key == "index" || key == "iota_dimension") {
    return std::strtoll(std::string(value).c_str(), nullptr, 10);
  }
  if (key == "slice") return ParseSlice(value);
  if (key == "padding") return ParsePadding(value);
  if (key == "direction") {
    if (std::optional<ComparisonDirection> d = StringToComparisonDirection(value)) return *d;
  }
  return std::monostate();
}

std::string FormatIntList(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  out += "}";
  return out;
}

std::string FormatSlice(const std::vector<SliceBounds>& bounds) {
  std::string text = "{";
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (i > 0) text += ", ";
    text += "[" + std::to_string(bounds[i].start) + ":" + std::to_string(bounds[i].limit);
    if (bounds[i].stride != 1) text += ":" + std::to_string(bounds[i].stride);
    text += "]";
  }
  return text + "}";
}

}  // namespace exla
