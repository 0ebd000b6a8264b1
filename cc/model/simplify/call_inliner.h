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

#include <memory>
#include <vector>

#include "ir/module.h"

namespace exla {

// Whether a computation reachable from the entry holds a `call`.
bool HasCalls(const HloModule& module);

// A copy of `module` in which every `call` reachable from the entry (in the
// entry, in loop bodies and conditions, in conditional branches, and in the
// computations inlined themselves) is replaced by the instructions of the
// computation it calls. Computations that only calls used stay in the
// module, unused.
std::unique_ptr<HloModule> InlineCalls(const HloModule& module);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_CALL_INLINER_H_
