// Reads of what a loop leaves unchanged, forwarded to the loop's input.
//
// A loop's state often carries values its body only reads: the splitter's
// loops carry the inputs each slice is cut from, and the loop of one trip
// that computes a remainder starts from the state the main loop ends with.
// Before it schedules, XLA reads such an element of the loop's result from
// the value the loop started with (measured: `cosine(gte(while, k))` of an
// element the body returns unchanged runs before the loop, on the loop's
// input). Work that reads only such elements is then ready before the loop
// runs, and XLA's breadth-first schedule runs it there: a remainder loop's
// slices of the inputs, once its one trip is inlined, are computed and
// held across the main loop. The memory model predicts the module so
// forwarded.
#ifndef EXLA_MODEL_SIMPLIFY_LOOP_FORWARDING_H_
#define EXLA_MODEL_SIMPLIFY_LOOP_FORWARDING_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every read of an element of a loop's result that the loop's body
// returns unchanged by the loop's initial value of it (an operand of the
// tuple the loop starts from), and removes the instructions left dead.
class LoopForwarding : public HloPass {
 public:
  std::string_view name() const override { return "loop-forwarding"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_LOOP_FORWARDING_H_
