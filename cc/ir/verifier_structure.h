// The verifier's checks that need no knowledge of opcodes: the call graph and
// each computation's operand graph are acyclic, and where in the text a
// computation or instruction is defined (for line/column in messages).
// Internal to cc/ir/verifier.cc.
#ifndef EXLA_IR_VERIFIER_STRUCTURE_H_
#define EXLA_IR_VERIFIER_STRUCTURE_H_

#include <functional>
#include <string>
#include <string_view>

#include "ir/module.h"

namespace exla {
namespace verifier_internal {

// Receives one violation: where (either may be null) and what.
using Report =
    std::function<void(const HloComputation*, const HloInstruction*, std::string message)>;

// No computation calls itself, directly or through others. Iterative: the
// chain of calls comes from the input and may be arbitrarily long.
void CheckCallGraphIsAcyclic(const HloModule& module, const Report& report);

// Operands and control predecessors come from `computation` and no
// instruction depends on itself. Reports at most one cycle.
void CheckOperandGraphIsAcyclic(const HloComputation& computation, const Report& report);

// "line L, column C: " where `instruction` (or, if empty, `computation`) is
// defined in `text`; empty when it cannot be found.
std::string DefinitionPosition(std::string_view text, const std::string& computation,
                               const std::string& instruction);

}  // namespace verifier_internal
}  // namespace exla

#endif  // EXLA_IR_VERIFIER_STRUCTURE_H_
