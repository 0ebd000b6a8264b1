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

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// The signature XLA builds one expansion computation for.
std::string ExpansionSignature(const HloInstruction& instruction);

// Records the signatures of the Choleskys and triangular solves that
// several instructions share, whose expansions therefore stay calls. Runs
// where XLA expands them: after the call inliner, before CSE merges any.
// The model does not expand them (expand/expansions.h counts their memory),
// so the pass changes nothing; it records into `shared`.
class ExpansionCalls : public HloPass {
 public:
  explicit ExpansionCalls(std::set<std::string>* shared) : shared_(shared) {}
  std::string_view name() const override { return "expansion-calls"; }
  bool Run(HloModule* module) override;

 private:
  std::set<std::string>* shared_;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_EXPANSION_CALLS_H_
