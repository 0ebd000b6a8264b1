// Parser for XLA's HLO text format.
//
// Accepts what HloModule::ToString() prints in both of XLA's common styles
// (HloPrintOptions::ShortParsable() and the default), with full constant
// literals. Anything a pass does not interpret (metadata, backend configs,
// literals, layouts with tiling, unknown opcodes with regular syntax) is kept
// verbatim. Malformed text throws ParseError, which carries a 1-based line and
// column and the token found there.
#ifndef EXLA_IR_PARSER_H_
#define EXLA_IR_PARSER_H_

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ir/module.h"

namespace exla {

class ParseError : public std::invalid_argument {
 public:
  ParseError(int line, int column, const std::string& message, const std::string& token);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

std::unique_ptr<HloModule> ParseHloModule(std::string_view text);

// Parses a single shape, e.g. "f32[2,3]{1,0}" (for tests and tools).
Shape ParseShape(std::string_view text);

}  // namespace exla

#endif  // EXLA_IR_PARSER_H_
