// ReadHloSignature: the entry computation's parameters, result leaves and
// input_output_alias, for callers that hand a module to a runtime (the Python
// package's TensorFlow runner needs the result shapes up front and must know
// which results are new values of variables).
//
// The shapes come from the parsed entry computation, not from the header's
// entry_computation_layout: hand-written text may omit the layout, and the
// parser already checks the instructions. The parser keeps the header's
// attributes as raw text, so input_output_alias is read here.
#include <cctype>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/exla.h"
#include "ir/parser.h"

namespace exla {
namespace {

SignatureArray Describe(const Shape& shape) {
  SignatureArray array;
  if (shape.IsTuple()) {
    array.element_type = "tuple";
    array.is_array = false;
    return array;
  }
  if (shape.IsToken()) {
    array.element_type = "token";
    array.is_array = false;
    return array;
  }
  array.is_array = shape.IsArray();
  array.element_type = std::string(PrimitiveTypeName(shape.element_type()));
  array.dims = shape.dims();
  array.is_dynamic = shape.IsDynamic();
  return array;
}

void Flatten(const Shape& shape, std::vector<SignatureArray>* leaves) {
  if (!shape.IsTuple()) {
    leaves->push_back(Describe(shape));
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) Flatten(element, leaves);
}

// Reads `{ {0}: (1, {}, may-alias), {1, 2}: (0, {3}) }` (XLA's syntax).
class AliasReader {
 public:
  explicit AliasReader(std::string_view text) : text_(text) {}

  std::vector<SignatureAlias> Read() {
    std::vector<SignatureAlias> aliases;
    Expect('{');
    if (Consume('}')) return aliases;
    do {
      SignatureAlias alias;
      alias.output_index = Index();
      Expect(':');
      Expect('(');
      alias.parameter = Number();
      Expect(',');
      alias.parameter_index = Index();
      if (Consume(',')) {  // the alias kind: may-alias or must-alias
        SkipSpace();
        while (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
                                       text_[pos_] == '-')) {
          ++pos_;
        }
      }
      Expect(')');
      aliases.push_back(std::move(alias));
    } while (Consume(','));
    Expect('}');
    return aliases;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Consume(c)) {
      throw std::invalid_argument(std::string("malformed input_output_alias: expected '") + c +
                                  "' at '" + std::string(text_.substr(pos_, 30)) + "'");
    }
  }
  int64_t Number() {
    SkipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (value > (INT64_MAX - 9) / 10) {
        throw std::invalid_argument("malformed input_output_alias: number too large");
      }
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) {
      throw std::invalid_argument("malformed input_output_alias: expected a number at '" +
                                  std::string(text_.substr(pos_, 30)) + "'");
    }
    return value;
  }
  std::vector<int64_t> Index() {
    std::vector<int64_t> index;
    Expect('{');
    if (Consume('}')) return index;
    do {
      index.push_back(Number());
    } while (Consume(','));
    Expect('}');
    return index;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The `{...}` value of `name=` in the raw header attributes ("" if absent).
std::string_view HeaderValue(std::string_view header, std::string_view name) {
  size_t at = 0;
  while ((at = header.find(name, at)) != std::string_view::npos) {
    bool starts_word = at == 0 || header[at - 1] == ' ' || header[at - 1] == ',';
    size_t after = at + name.size();
    if (starts_word && after < header.size() && header[after] == '=') {
      size_t begin = after + 1, end = begin;
      int depth = 0;
      for (; end < header.size(); ++end) {
        if (header[end] == '{') ++depth;
        if (header[end] == '}' && --depth == 0) return header.substr(begin, end + 1 - begin);
      }
      throw std::invalid_argument("malformed " + std::string(name) + ": unbalanced braces");
    }
    at = after;
  }
  return {};
}

}  // namespace

HloSignature ReadHloSignature(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  const HloComputation* entry = module->entry();
  if (entry == nullptr) throw std::invalid_argument("the module has no ENTRY computation");
  HloSignature signature;
  for (const HloInstruction* parameter : entry->parameters()) {
    signature.parameters.push_back(Describe(parameter->shape()));
  }
  const Shape& result = entry->root()->shape();
  signature.output_is_tuple = result.IsTuple();
  Flatten(result, &signature.outputs);
  std::string_view aliases = HeaderValue(module->header_attributes(), "input_output_alias");
  if (!aliases.empty()) signature.aliases = AliasReader(aliases).Read();
  return signature;
}

}  // namespace exla
