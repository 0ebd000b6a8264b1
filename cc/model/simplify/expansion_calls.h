// Which of XLA's expansions of linear algebra run inline.
//
// XLA's CPU pipeline expands Cholesky factorisations and triangular solves
// right after inlining the module's calls, before it merges common
// subexpressions: every instruction of one signature (opcode, operand
// shapes, options) calls one computation built for that signature, and
// the call inliner that follows inlines only a computation called from
// one place. An inlined expansion is scheduled with its caller, so what it
// computes from no operand (a mask, a block of zeros) runs first thing and
// stays alive until the expansion runs; a shared one computes everything
// when called.
#ifndef EXLA_MODEL_SIMPLIFY_EXPANSION_CALLS_H_
#define EXLA_MODEL_SIMPLIFY_EXPANSION_CALLS_H_

#include <set>
#include <string>

#include "ir/module.h"

namespace exla {

// The signature XLA builds one expansion computation for.
std::string ExpansionSignature(const HloInstruction& instruction);

// The signatures of the Choleskys and triangular solves of `module` (as
// XLA expands it: calls inlined, nothing merged yet) that several
// instructions share, whose expansions therefore stay calls.
std::set<std::string> SharedExpansionSignatures(const HloModule& module);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_EXPANSION_CALLS_H_
