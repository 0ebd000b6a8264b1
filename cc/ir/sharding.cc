#include "ir/sharding.h"

#include <cctype>
#include <string>

namespace exla {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// `text` without its outer braces, or nullopt if it is not one braced group.
std::optional<std::string_view> Unbrace(std::string_view text) {
  text = Trim(text);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0 && i + 1 != text.size()) return std::nullopt;
  }
  return text.substr(1, text.size() - 2);
}

// Splits at `separator` outside brackets, braces and quotes.
std::vector<std::string_view> SplitTopLevel(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) quoted = !quoted;
    if (quoted) continue;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == separator && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

// "[8,1]" -> {8, 1}; nullopt unless every entry is a positive integer.
std::optional<std::vector<int64_t>> ParseDims(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<int64_t> dims;
  for (std::string_view part : SplitTopLevel(text.substr(1, text.size() - 2), ',')) {
    part = Trim(part);
    if (part.empty()) return std::nullopt;
    int64_t value = 0;
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      value = value * 10 + (c - '0');
    }
    if (value <= 0) return std::nullopt;
    dims.push_back(value);
  }
  return dims;
}

// `devices=[..]<assignment> [last_tile_dim_replicate] [last_tile_dims={..}]
// [metadata={..}]`.
std::optional<HloSharding> ParseTiled(const std::vector<std::string_view>& tokens) {
  std::string_view devices = tokens.front().substr(std::string_view("devices=").size());
  size_t close = devices.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  std::optional<std::vector<int64_t>> tile_dims = ParseDims(devices.substr(0, close + 1));
  if (!tile_dims.has_value()) return std::nullopt;
  // The device order (`<=[8]`, `<=[2,4]T(1,0)` or an explicit list) does not
  // change how many pieces each dimension has.
  HloSharding sharding;
  sharding.kind = HloSharding::Kind::kTiled;
  size_t subgroups = 0;
  for (size_t i = 1; i < tokens.size(); ++i) {
    std::string_view token = tokens[i];
    if (token == "last_tile_dim_replicate") {
      subgroups = 1;
    } else if (token.substr(0, 15) == "last_tile_dims=") {
      std::optional<std::string_view> types = Unbrace(token.substr(15));
      if (!types.has_value()) return std::nullopt;
      subgroups = 0;
      for (std::string_view type : SplitTopLevel(*types, ',')) {
        type = Trim(type);
        if (type == "manual") {
          sharding.partially_manual = true;
        } else if (type != "replicated") {
          return std::nullopt;  // subgroups of a kind exla does not know
        }
        ++subgroups;
      }
    } else if (token.substr(0, 9) != "metadata=") {
      return std::nullopt;  // shard_as/shard_like groups, unknown options
    }
  }
  if (subgroups > tile_dims->size()) return std::nullopt;
  sharding.tiles.assign(tile_dims->begin(), tile_dims->end() - static_cast<long>(subgroups));
  for (int64_t pieces : *tile_dims) sharding.devices *= pieces;
  return sharding;
}

}  // namespace

int64_t HloSharding::TilesOf(int64_t dim) const {
  if (kind != Kind::kTiled || dim < 0 || dim >= static_cast<int64_t>(tiles.size())) return 1;
  return tiles[dim];
}

std::optional<HloSharding> ParseSharding(std::string_view text) {
  std::optional<std::string_view> inner = Unbrace(text);
  if (!inner.has_value()) return std::nullopt;
  std::string_view body = Trim(*inner);
  if (body.empty() || body.front() == '{') {
    HloSharding tuple;
    tuple.kind = HloSharding::Kind::kTuple;
    if (body.empty()) return tuple;
    for (std::string_view element : SplitTopLevel(body, ',')) {
      std::optional<HloSharding> parsed = ParseSharding(element);
      if (!parsed.has_value()) return std::nullopt;
      tuple.elements.push_back(*parsed);
    }
    return tuple;
  }
  std::vector<std::string_view> tokens;
  for (std::string_view token : SplitTopLevel(body, ' ')) {
    if (!Trim(token).empty()) tokens.push_back(Trim(token));
  }
  const std::string_view first = tokens.front();
  bool only_metadata = true;
  for (size_t i = 1; i < tokens.size(); ++i) only_metadata &= tokens[i].substr(0, 9) == "metadata=";
  HloSharding sharding;
  if (first == "replicated" && only_metadata) return sharding;
  if (first == "manual" && only_metadata) {
    sharding.kind = HloSharding::Kind::kManual;
    return sharding;
  }
  if (first == "maximal" && tokens.size() >= 2 && tokens[1].substr(0, 7) == "device=") {
    sharding.kind = HloSharding::Kind::kMaximal;
    return sharding;
  }
  if (first.substr(0, 8) == "devices=") return ParseTiled(tokens);
  return std::nullopt;
}

}  // namespace exla
