// The parser's character level: spaces and comments, names, integers,
// brackets, quoted strings, attribute values, and the errors that point at
// a line and column.
#include <cctype>
#include <charconv>
#include <cstring>

#include "ir/attribute_syntax.h"
#include "ir/parser.h"
#include "ir/parser_internal.h"

namespace exla {

void HloParser::SkipSpace() {
  while (!AtEnd()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && Peek(1) == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else if (c == '/' && Peek(1) == '/') {
      while (!AtEnd() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

void HloParser::SkipInlineSpace() {
  while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
}

bool HloParser::Consume(char c) {
  SkipSpace();
  if (Peek() == c) {
    ++pos_;
    return true;
  }
  return false;
}

void HloParser::Expect(char c, const char* what) {
  if (!Consume(c)) Fail(std::string("expected '") + c + "' " + what);
}

bool HloParser::ConsumeWord(const char* word) {
  SkipSpace();
  size_t n = std::strlen(word);
  if (text_.substr(pos_, n) == word && !IsNameChar(Peek(n))) {
    pos_ += n;
    return true;
  }
  return false;
}

bool HloParser::IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

std::string HloParser::ParseName(const char* what) {
  SkipSpace();
  if (Peek() == '%') {
    ++pos_;
    saw_percent_ = true;
  }
  size_t start = pos_;
  while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
  if (pos_ == start) Fail(std::string("expected ") + what);
  return std::string(text_.substr(start, pos_ - start));
}

int64_t HloParser::ParseInteger() {
  SkipSpace();
  size_t start = pos_;
  if (Peek() == '-') ++pos_;
  while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  if (pos_ == start || (pos_ == start + 1 && text_[start] == '-')) {
    pos_ = start;
    Fail("expected an integer");
  }
  int64_t value = 0;
  const char* first = text_.data() + start;
  if (std::from_chars(first, text_.data() + pos_, value).ec != std::errc()) {
    pos_ = start;
    Fail("integer out of range (it must fit in 64 bits)");
  }
  return value;
}

HloParser::ScanStop HloParser::SkipToDepthZero(std::string_view stops,
                                               bool line_break_ends_brackets) {
  int depth = 0;
  while (!AtEnd()) {
    char c = text_[pos_];
    if (c == '"') {
      SkipString();
      continue;
    }
    if (c == '(' || c == '{' || c == '[') {
      ++depth;
    } else if (c == ')' || c == '}' || c == ']') {
      if (depth == 0) return ScanStop::kAtDepthZero;
      --depth;
    } else if (depth == 0 && stops.find(c) != std::string_view::npos) {
      return ScanStop::kAtDepthZero;
    } else if (depth > 0 && c == '\n' && line_break_ends_brackets) {
      return ScanStop::kLineBreakInBrackets;
    }
    ++pos_;
  }
  return depth == 0 ? ScanStop::kAtDepthZero : ScanStop::kTextEndedInBrackets;
}

std::string_view HloParser::ScanBalanced(char closer) {
  size_t start = pos_;
  if (SkipToDepthZero("", /*line_break_ends_brackets=*/false) == ScanStop::kAtDepthZero &&
      !AtEnd()) {
    char c = text_[pos_];
    if (c != closer) Fail(std::string("unbalanced '") + c + "'");
    std::string_view inner = text_.substr(start, pos_ - start);
    ++pos_;
    return inner;
  }
  pos_ = start;
  Fail(std::string("missing '") + closer + "'");
}

void HloParser::SkipString() {
  size_t start = pos_;
  ++pos_;  // opening quote
  while (!AtEnd() && text_[pos_] != '"' && text_[pos_] != '\n') {
    if (text_[pos_] == '\\') ++pos_;
    ++pos_;
  }
  if (AtEnd() || text_[pos_] == '\n') {
    pos_ = start;
    Fail("unterminated string");
  }
  ++pos_;
}

std::string_view HloParser::ScanAttributeValue() {
  size_t start = pos_;
  switch (SkipToDepthZero(",\n", /*line_break_ends_brackets=*/true)) {
    case ScanStop::kAtDepthZero:
      break;
    case ScanStop::kLineBreakInBrackets:
      FailAt(start, "unterminated bracket in attribute value");
    case ScanStop::kTextEndedInBrackets:
      pos_ = start;
      Fail("unbalanced brackets in attribute value");
  }
  size_t end = pos_;
  while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\r')) --end;
  if (end == start) Fail("expected an attribute value");
  return text_.substr(start, end - start);
}

void HloParser::ValidateTypedAttribute(const std::string& key, std::string_view value,
                                       size_t position) {
  if (std::optional<AttributeSyntaxError> error = CheckTypedAttribute(key, value)) {
    FailAt(position + error->offset, error->message);
  }
}

bool HloParser::LooksLikeShape() const {
  // Operands may be prefixed by their shape in the long print style:
  // `f32[2]{0} %x` or `(f32[], s32[]) %t`. Names never contain '[' or start
  // with '(', so a type name directly followed by '[' decides it.
  if (Peek() == '(') return true;
  size_t i = pos_;
  while (i < text_.size() && std::isalnum(static_cast<unsigned char>(text_[i]))) ++i;
  if (i == pos_ || i >= text_.size() || text_[i] != '[') return false;
  return PrimitiveTypeFromName(text_.substr(pos_, i - pos_)) != PrimitiveType::kInvalid;
}

void HloParser::FailAt(size_t position, const std::string& message) const {
  int line = 1;
  size_t line_start = 0;
  size_t limit = std::min(position, text_.size());
  for (size_t i = 0; i < limit; ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  int column = static_cast<int>(limit - line_start) + 1;
  // The offending token: up to the next delimiter, printable characters only.
  std::string token;
  for (size_t i = limit; i < text_.size() && token.size() < 40; ++i) {
    char c = text_[i];
    if (c == '\n' || (token.size() > 0 && (c == ' ' || c == ',' || c == ')'))) break;
    if (token.empty() && c == ' ') continue;  // show the next real token
    token += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  if (token.empty()) token = limit >= text_.size() ? "<end of input>" : " ";
  throw ParseError(line, column, message, token);
}

}  // namespace exla
