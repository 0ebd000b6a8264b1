#include "ir/literal_text.h"

#include <cctype>
#include <vector>

namespace exla {
namespace {

bool IsSeparator(char c) {
  return c == ',' || c == '{' || c == '}' || c == ' ' || c == '\n' || c == '\t';
}

// Whether a `/*` comment opens at `i`. Compared character by character: a
// comparison with a C string at every character (strlen, then memcmp) was
// most of the time spent reading a large constant.
bool CommentAt(std::string_view text, size_t i) {
  return text[i] == '/' && i + 1 < text.size() && text[i + 1] == '*';
}

bool Counted(const std::string& literal) {
  return literal.find("...") == std::string::npos && literal.find('(') == std::string::npos;
}

// `literal` with every `/* ... */` comment replaced by a space. XLA prints
// constants of rank 3 and more with index comments (`{ /*i0=0*/ { ... } }`),
// whose digits are not values. A comment that is not closed (which
// LiteralValueError refuses first) runs to the end.
std::string WithoutComments(const std::string& literal) {
  if (literal.find("/*") == std::string::npos) return literal;
  std::string text;
  text.reserve(literal.size());
  size_t i = 0;
  while (i < literal.size()) {
    if (CommentAt(literal, i)) {
      const size_t end = literal.find("*/", i + 2);
      text += ' ';
      i = end == std::string::npos ? literal.size() : end + 2;
    } else {
      text += literal[i++];
    }
  }
  return text;
}

// Whether `token` (sign removed) is a decimal number: digits with an
// optional fraction and exponent.
bool IsDecimal(std::string_view token) {
  auto digit = [&](size_t i) { return std::isdigit(static_cast<unsigned char>(token[i])) != 0; };
  size_t i = 0;
  bool digits = false;
  while (i < token.size() && digit(i)) ++i, digits = true;
  if (i < token.size() && token[i] == '.') {
    ++i;
    while (i < token.size() && digit(i)) ++i, digits = true;
  }
  if (!digits) return false;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    const size_t start = i;
    while (i < token.size() && digit(i)) ++i;
    if (i == start) return false;
  }
  return i == token.size();
}

// A NaN's payload as XLA prints it: `0x` and hex digits, or decimal digits.
bool IsNanPayload(std::string_view payload) {
  const bool hex = payload.size() > 2 && payload[0] == '0' && (payload[1] == 'x' || payload[1] == 'X');
  if (hex) payload.remove_prefix(2);
  if (payload.empty()) return false;
  for (char c : payload) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!(hex ? std::isxdigit(u) : std::isdigit(u))) return false;
  }
  return true;
}

// Whether `token` is one value as XLA's parser reads it (see
// LiteralValueError), and whether it is one of an integral type: digits
// with an optional sign, or true/false.
bool IsValue(std::string_view token) {
  // Most values of a large constant are plain numbers: decided first.
  if (!token.empty() && std::isdigit(static_cast<unsigned char>(token[0]))) return IsDecimal(token);
  if (token == "..." || token == "true" || token == "false") return true;
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
  if (token == "inf" || token == "nan") return true;
  if (token.substr(0, 4) == "nan(" && token.back() == ')') {
    return IsNanPayload(token.substr(4, token.size() - 5));
  }
  return IsDecimal(token);
}

bool IsIntegralValue(std::string_view token) {
  if (token == "..." || token == "true" || token == "false") return true;
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
  if (token.empty()) return false;
  for (char c : token) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Reads a literal's values one token at a time, skipping separators and
// comments. Parentheses separate values where they group them (tuple and
// complex constants); elsewhere they are part of the token, so that `(1)`
// in a real constant is no value. A NaN's payload, `nan(0x7)`, stays one
// token either way.
class LiteralTokens {
 public:
  LiteralTokens(std::string_view literal, bool grouped) : text_(literal), grouped_(grouped) {}

  // The next token, or nothing at the end; `*unclosed` is set when a
  // comment that is not closed ends the text.
  std::optional<std::string_view> Next(bool* unclosed) {
    while (i_ < text_.size()) {
      if (CommentAt(text_, i_)) {
        const size_t end = text_.find("*/", i_ + 2);
        if (end == std::string_view::npos) {
          *unclosed = true;
          return std::nullopt;
        }
        i_ = end + 2;
      } else if (Separates(i_)) {
        ++i_;
      } else {
        return Token();
      }
    }
    return std::nullopt;
  }

 private:
  static bool IsNan(std::string_view word) {
    if (!word.empty() && (word[0] == '+' || word[0] == '-')) word.remove_prefix(1);
    return word == "nan";
  }

  bool Separates(size_t at) const {
    const char c = text_[at];
    return c == ' ' || c == ',' || c == '{' || c == '}' || c == '\n' || c == '\t' || c == '\r' ||
           c == '\f' || c == '\v' ||
           (grouped_ && (c == '(' || c == ')'));
  }

  std::string_view Token() {
    const size_t start = i_;
    while (i_ < text_.size() && !CommentAt(text_, i_)) {
      if (text_[i_] == '(' && IsNan(text_.substr(start, i_ - start))) {
        const size_t close = text_.find(')', i_);
        if (close != std::string_view::npos) {
          i_ = close + 1;  // the payload's parentheses
          continue;
        }
      }
      if (Separates(i_)) break;
      ++i_;
    }
    return text_.substr(start, i_ - start);
  }

  std::string_view text_;
  bool grouped_;
  size_t i_ = 0;
};

}  // namespace

std::optional<std::string> LiteralValueError(std::string_view literal, const Shape& shape) {
  const bool real_array = shape.IsArray() && !IsComplexType(shape.element_type());
  // Integers and booleans take no fraction, exponent, inf or nan.
  const bool integral = real_array && !IsFloatingPointType(shape.element_type());
  LiteralTokens tokens(literal, /*grouped=*/!real_array);
  bool unclosed = false;
  while (std::optional<std::string_view> token = tokens.Next(&unclosed)) {
    if (!IsValue(*token)) return "'" + std::string(*token) + "', which is not a value";
    if (integral && !IsIntegralValue(*token)) {
      return "'" + std::string(*token) + "', which is not a value of " +
             std::string(PrimitiveTypeName(shape.element_type()));
    }
  }
  if (unclosed) return "an unterminated comment";
  return std::nullopt;
}

std::optional<std::vector<std::string_view>> LiteralValues(std::string_view literal,
                                                           const Shape& shape) {
  if (!shape.IsArray() || IsComplexType(shape.element_type())) return std::nullopt;
  std::vector<std::string_view> values;
  values.reserve(static_cast<size_t>(shape.ElementCount()));
  LiteralTokens tokens(literal, /*grouped=*/false);
  bool unclosed = false;
  while (std::optional<std::string_view> token = tokens.Next(&unclosed)) {
    if (*token == "...") return std::nullopt;
    values.push_back(*token);
  }
  if (unclosed || static_cast<int64_t>(values.size()) != shape.ElementCount()) return std::nullopt;
  return values;
}

int64_t LiteralElementCount(const std::string& commented) {
  const std::string literal = WithoutComments(commented);
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
  const std::string literal = WithoutComments(commented);
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

namespace {

void AppendLiteral(const std::vector<std::string_view>& values, const std::vector<int64_t>& dims, size_t level,
                   size_t* next, std::string* text) {
  if (level == dims.size()) {
    text->append(values[(*next)++]);
    return;
  }
  *text += level + 1 == dims.size() ? "{" : "{ ";
  for (int64_t i = 0; i < dims[level]; ++i) {
    if (i > 0) *text += ", ";
    AppendLiteral(values, dims, level + 1, next, text);
  }
  *text += level + 1 == dims.size() ? "}" : " }";
}

}  // namespace

std::string LiteralText(const std::vector<std::string_view>& values, const std::vector<int64_t>& dims) {
  std::string text;
  size_t next = 0;
  AppendLiteral(values, dims, 0, &next, &text);
  return text;
}

}  // namespace exla
