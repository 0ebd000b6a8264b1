// The text of a constant's literal, read for what the verifier checks
// against the constant's shape: that every piece of it is a value, how many
// values it holds and how they nest. The values themselves stay text (see
// instruction.h).
#ifndef EXLA_IR_LITERAL_TEXT_H_
#define EXLA_IR_LITERAL_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/shape.h"

namespace exla {

// Why `literal`, the text of a constant of shape `shape`, is not a list of
// values of its element type as XLA's parser reads them: the first piece that
// is no value (an operand name where an opcode was swapped for `constant`, a
// fraction in an integer constant) or a comment that is not closed; nothing
// when it is. Values are decimal numbers (sign, fraction and exponent
// optional), true, false, inf and nan (signed; NaN with a payload, `nan(0x7)`)
// and `...` of an elided literal. Parentheses group the values of tuple and
// complex constants. Comments (`/*i0=0*/`) are not values.
std::optional<std::string> LiteralValueError(std::string_view literal, const Shape& shape);

// The functions below read a literal that LiteralValueError accepted (its
// comments are closed).

// The values of an array constant's literal in row-major order (the order
// XLA prints them, whatever the layout), each as its text; nothing when the
// literal is elided (`...`), holds complex values, or does not hold as many
// values as `shape` has elements. Two equal texts are the same value.
std::optional<std::vector<std::string_view>> LiteralValues(std::string_view literal,
                                                           const Shape& shape);

// `values` (row-major, as many as `dims` has elements) as XLA prints the
// literal of an array of dimensions `dims`: `{1, 2}`, `{ {1, 2}, {3, 4} }`.
// The inverse of LiteralValues.
std::string LiteralText(const std::vector<std::string_view>& values, const std::vector<int64_t>& dims);

// Leaf values of a constant literal (`1`, `{1, 2}`, `{ {1, 2}, {3, 4} }`), or
// -1 when the literal is elided (`{...}`) or has a form not counted here
// (complex values, NaN payloads). Comments (`/*i0=0*/`, as XLA prints index
// positions in constants of rank 3 and more) are not values.
int64_t LiteralElementCount(const std::string& literal);

// Why the braces of `literal`, an array constant's text, do not nest as the
// dimensions of `shape` (XLA's parser wants one level per dimension, with as
// many entries as the dimension has), or nothing when they do or when the
// literal is not counted (see LiteralElementCount). Iterative: the nesting
// comes from the input and may be arbitrarily deep.
std::optional<std::string> LiteralNestingError(const std::string& literal, const Shape& shape);

}  // namespace exla

#endif  // EXLA_IR_LITERAL_TEXT_H_
