// XLA's CPU pipeline inlines every call before it fuses and schedules.
//
// Early in its pipeline (before fusion), XLA's CPU compiler runs its call
// inliner: the body of each `call` is copied into the caller in its place,
// so that what JAX lowers as nested jit functions, closed calls and
// wrappers of loop conditions becomes one flat computation. The scheduler
// then orders that flat computation as a whole: work of one call that is
// ready early runs early, beside the work of other calls (the inputs of
// several loops that JAX wrote in separate functions are all computed
// before the first loop runs, and all stay alive meanwhile). The memory
// model therefore predicts the inlined module, not the module as written.
#ifndef EXLA_MODEL_SIMPLIFY_CALL_INLINER_H_
#define EXLA_MODEL_SIMPLIFY_CALL_INLINER_H_

#include <string_view>
#include <vector>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every `call` reachable from the entry (in the entry, in loop
// bodies and conditions, in conditional branches, and in the computations
// inlined themselves) by the instructions of the computation it calls.
// Computations that only calls used stay in the module, unused.
class CallInliner : public HloPass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  bool Run(HloModule* module) override;
};

// A copy of `original` (name, opcode, shape, attributes) in `into`,
// reading `operands`.
HloInstruction* CopyInstruction(const HloInstruction& original, const std::vector<HloInstruction*>& operands,
                                HloComputation* into);

// Copies the instructions of `callee` into `caller`, its parameters read
// from `arguments`; returns the copy of its root (nullptr when the
// arguments do not match) and adds the calls among the copies to `calls`.
HloInstruction* InlineComputation(const HloComputation& callee, const std::vector<HloInstruction*>& arguments,
                                  HloComputation* caller, std::vector<HloInstruction*>* calls);

// Replaces `instruction` by `result` wherever it is read (as the root too)
// and removes it.
void ReplaceAndRemove(HloInstruction* instruction, HloInstruction* result);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_CALL_INLINER_H_
