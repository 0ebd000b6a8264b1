#include "ir/literal_text.h"

#include <vector>

namespace exla {
namespace {

bool IsSeparator(char c) {
  return c == ',' || c == '{' || c == '}' || c == ' ' || c == '\n' || c == '\t';
}

bool Counted(const std::string& literal) {
  return literal.find("...") == std::string::npos && literal.find('(') == std::string::npos;
}

// `literal` with every `/* ... */` comment replaced by a space. XLA prints
// constants of rank 3 and more with index comments (`{ /*i0=0*/ { ... } }`),
// whose digits are not values. nullopt when a comment is not closed.
std::optional<std::string> WithoutComments(const std::string& literal) {
  std::string text;
  text.reserve(literal.size());
  size_t i = 0;
  while (i < literal.size()) {
    if (literal.compare(i, 2, "/*") == 0) {
      size_t end = literal.find("*/", i + 2);
      if (end == std::string::npos) return std::nullopt;
      text += ' ';
      i = end + 2;
    } else {
      text += literal[i++];
    }
  }
  return text;
}

}  // namespace

int64_t LiteralElementCount(const std::string& commented) {
  std::optional<std::string> uncommented = WithoutComments(commented);
  if (!uncommented.has_value()) return -1;
  const std::string& literal = *uncommented;
  if (!Counted(literal)) return -1;
  int64_t count = 0;
  bool in_token = false;
  for (char c : literal) {
    bool separator = IsSeparator(c);
    if (!separator && !in_token) ++count;
    in_token = !separator;
  }
  return count;
}

std::optional<std::string> LiteralNestingError(const std::string& commented, const Shape& shape) {
  const std::string where = " in a constant of shape " + shape.ToString(false);
  std::optional<std::string> uncommented = WithoutComments(commented);
  if (!uncommented.has_value()) return "a comment '/*' that is not closed" + where;
  const std::string& literal = *uncommented;
  if (!Counted(literal) || !shape.IsArray()) return std::nullopt;
  const size_t rank = static_cast<size_t>(shape.rank());
  std::vector<int64_t> entries;  // entries seen so far at each open level
  bool closed_outermost = false;
  bool in_token = false;
  for (char c : literal) {
    bool token_starts = !IsSeparator(c) && !in_token;
    in_token = !IsSeparator(c);
    if (c == '{') {
      if (closed_outermost) return "a second outermost {...}" + where;
      if (entries.size() == rank) {
        return "braces nested " + std::to_string(rank + 1) + " levels deep" + where;
      }
      if (!entries.empty()) ++entries.back();
      entries.push_back(0);
    } else if (c == '}') {
      if (entries.empty()) return "an unmatched '}'" + where;
      const size_t level = entries.size() - 1;
      if (entries.back() != shape.dim(static_cast<int>(level))) {
        return std::to_string(entries.back()) + " entries along dimension " +
               std::to_string(level) + " where it has " +
               std::to_string(shape.dim(static_cast<int>(level))) + where;
      }
      entries.pop_back();
      closed_outermost = entries.empty();
    } else if (token_starts) {
      if (entries.size() != rank) {
        return "values at nesting level " + std::to_string(entries.size()) + ", not " +
               std::to_string(rank) + where;
      }
      if (!entries.empty()) ++entries.back();
    }
  }
  if (!entries.empty()) return "an unclosed '{'" + where;
  return std::nullopt;
}

}  // namespace exla
