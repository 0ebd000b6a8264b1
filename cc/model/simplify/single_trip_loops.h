// XLA's while loop simplifier replaces a loop that runs once by its body.
//
// A loop of one trip (the splitter's remainder loop, a framework's loop over
// one element) then holds no state table, no counter and no condition, and
// its body's values are scheduled with the caller's. XLA's call inliner,
// like the model's, then inlines the call.
#ifndef EXLA_MODEL_SIMPLIFY_SINGLE_TRIP_LOOPS_H_
#define EXLA_MODEL_SIMPLIFY_SINGLE_TRIP_LOOPS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every while loop that runs once (loop_trips.h) by a call of its
// body on its initial state.
class SingleTripLoopToCall : public HloPass {
 public:
  std::string_view name() const override { return "single-trip-loop-to-call"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_SINGLE_TRIP_LOOPS_H_
