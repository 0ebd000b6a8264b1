// Syntax of the attributes passes decode (dimensions, slice, dot dimension
// numbers, indices). The parser keeps every attribute verbatim, but these are
// checked when parsed, before attributes.h decodes them, so that a malformed
// one is reported at its position rather than misread; XLA checks the rest
// when the module goes back.
#ifndef EXLA_IR_ATTRIBUTE_SYNTAX_H_
#define EXLA_IR_ATTRIBUTE_SYNTAX_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace exla {

struct AttributeSyntaxError {
  size_t offset;  // into the value
  std::string message;
};

std::optional<AttributeSyntaxError> CheckTypedAttribute(const std::string& key,
                                                        std::string_view value);

}  // namespace exla

#endif  // EXLA_IR_ATTRIBUTE_SYNTAX_H_
