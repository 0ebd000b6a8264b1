// Checks that an HLO module is well formed before exla rewrites it.
//
// The parser accepts anything that has HLO's syntax; the passes assume much
// more (one ENTRY, parameters numbered 0..n-1, an acyclic graph, shapes that
// agree with their operands). A module that breaks those assumptions would be
// rewritten into something XLA rejects later, far from the cause, or crash a
// pass. The verifier states the assumptions once and reports every violation.
//
// Checked: module structure (exactly one ENTRY, no recursion through called
// computations), computation structure (root, parameter numbering, operands
// from the same computation, no cycles), every shape (no negative
// dimensions, at most 2^63 - 1 bytes), constant literals (values, element
// count and nesting), the operand count of every opcode whose count XLA's
// parser fixes, attribute names of the opcodes below (those XLA's parser
// accepts), and for each opcode that exla's builder can construct the printed
// shape against the shape inferred from the operands and attributes (ranges
// of `dimensions`, dot dimension numbers, slice bounds, tuple indices), and
// sort's and batch normalization's. Opcodes the verifier does not know
// are carried verbatim: only the generic checks apply to them.
#ifndef EXLA_IR_VERIFIER_H_
#define EXLA_IR_VERIFIER_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"

namespace exla {

// One violation. `computation` and `instruction` are empty for module-level
// and computation-level problems respectively.
struct VerifierError {
  std::string computation;
  std::string instruction;
  std::string message;

  // "computation 'c', instruction 'i': message".
  std::string ToString() const;
};

// Every violation in `module`, in print order; empty when it is well formed.
std::vector<VerifierError> VerifyModule(const HloModule& module);

// Throws std::invalid_argument naming the first violations. When `text` (the
// text `module` was parsed from) is given, each message starts with the
// `line L, column C` of the instruction or computation it concerns, like the
// parser's own errors.
void VerifyModuleOrThrow(const HloModule& module, std::string_view text = {});

}  // namespace exla

#endif  // EXLA_IR_VERIFIER_H_
