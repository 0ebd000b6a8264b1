// Printer for XLA's HLO text format, in the style the module was parsed in.
#ifndef EXLA_IR_PRINTER_H_
#define EXLA_IR_PRINTER_H_

#include <string>

#include "ir/module.h"

namespace exla {

std::string PrintHloModule(const HloModule& module);
std::string PrintHloComputation(const HloComputation& computation, const PrintStyle& style);
std::string PrintHloInstruction(const HloInstruction& instruction, const PrintStyle& style);

}  // namespace exla

#endif  // EXLA_IR_PRINTER_H_
