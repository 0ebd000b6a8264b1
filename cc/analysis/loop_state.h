// Which parts of a while loop's state its body hands back unchanged.
//
// XLA's copy insertion leaves a loop's initial value in place (no copy)
// for the elements of the state that the body only reads and returns as
// they came in: a loop-invariant weight, a counter's bound. The model must
// see through what XLA's simplifier removes before it decides: a reshape
// or bitcast that keeps the shape (TensorFlow returns every element of a
// body through an identity reshape), and elements nested in inner tuples
// (TensorFlow's tensor lists), which are leaves of the state like any
// other.
#ifndef EXLA_ANALYSIS_LOOP_STATE_H_
#define EXLA_ANALYSIS_LOOP_STATE_H_

#include <cstdint>
#include <vector>

#include "ir/computation.h"

namespace exla {

// `value` without the views XLA's simplifier removes: reshapes, bitcasts
// and copies to the shape it already has, layout included.
const HloInstruction* StripIdentity(const HloInstruction* value);

// Whether `loop` is a while loop over a flat tuple of arrays that starts
// from a tuple built in place: each element is one buffer, and its
// initial value one operand of that tuple.
bool FlatArrayState(const HloInstruction& loop);

// For each leaf of the body's state, in order, whether the body returns it
// unchanged. Empty when the body's result does not match its parameter.
std::vector<bool> PassThroughLeaves(const HloComputation& body);

// For each leaf of the body's state, in order, the leaf of its parameter
// that the body returns there unchanged, or -1 where it computes the leaf.
// A leaf returned in another's place (keys rotated from step to step) is
// a copy XLA's copy insertion adds: the state's elements keep buffers of
// their own. Empty when the body's result does not match its parameter.
std::vector<int64_t> ReturnedParameterLeaves(const HloComputation& body);

// For each leaf of a loop's initial value, the instruction that writes it
// when tuples build the value (nested ones included: TensorFlow's tensor
// lists), else nullptr. XLA writes such an instruction in place into the
// loop's state when the loop is its only reader.
std::vector<const HloInstruction*> InitialLeaves(const HloInstruction& init);

}  // namespace exla

#endif  // EXLA_ANALYSIS_LOOP_STATE_H_
