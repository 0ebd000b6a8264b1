// The text of a constant's literal, read for its structure only: how many
// values it holds and how they nest. The verifier checks both against the
// constant's shape; the values themselves stay text (see instruction.h).
#ifndef EXLA_IR_LITERAL_TEXT_H_
#define EXLA_IR_LITERAL_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/shape.h"

namespace exla {

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
