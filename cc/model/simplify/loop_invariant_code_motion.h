// XLA's while loop invariant code motion: work a loop's body repeats with
// the same inputs on every trip, computed once before the loop.
//
// XLA's CPU simplification pipeline runs WhileLoopInvariantCodeMotion
// (xla/service/while_loop_invariant_code_motion.cc) with its defaults: no
// limit on how much a hoisted value may grow. An instruction of a body
// whose operands are all invariant (an element the body returns unchanged,
// a constant, or another invariant instruction) is computed in the loop's
// computation and its value joins the loop's state. Views and broadcasts
// (bitcast, broadcast, iota, reverse, slice, transpose, reshape, tuple) and
// constants are not hoisted for themselves, only with an instruction that
// reads them. Loops of at most one trip are left alone.
//
// For memory it matters where the hoisted values land: before the loop, in
// XLA's breadth-first schedule, they run as soon as their inputs are ready
// and live beside whatever else runs then (measured: a broadcast read by a
// dot in a loop of six trips is held in the entry beside another
// broadcast computed there, 33 kB where the body alone held 17 kB).
#ifndef EXLA_MODEL_SIMPLIFY_LOOP_INVARIANT_CODE_MOTION_H_
#define EXLA_MODEL_SIMPLIFY_LOOP_INVARIANT_CODE_MOTION_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Hoists the invariant work of every while loop over a tuple that starts
// from a tuple instruction, runs more than once, has a body and condition
// of its own and whose result is read element by element. Loops outside
// those are left as they are (the model then holds the work in the body).
class LoopInvariantCodeMotion : public HloPass {
 public:
  std::string_view name() const override { return "while-loop-invariant-code-motion"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_LOOP_INVARIANT_CODE_MOTION_H_
