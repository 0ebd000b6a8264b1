// What XLA's while loop simplifier removes from a loop's state.
//
// Before it assigns buffers, XLA's simplifier shrinks the state of a while
// loop: an element that repeats another (the same initial value, updated
// the same way: TensorFlow keeps two counters of iterations that step
// together) is dropped and its readers read the other; an element that
// stays a literal (returned unchanged, initialised by a literal, such as a
// bound of iterations) is dropped and its readers read the literal. The
// loop then holds one buffer for repeated elements and a pointer table of
// only the elements left.
#ifndef EXLA_MODEL_SIMPLIFY_LOOP_SIMPLIFIER_H_
#define EXLA_MODEL_SIMPLIFY_LOOP_SIMPLIFIER_H_

#include <cstdint>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// For each element of the state of the while loop `loop`, the earlier
// element it repeats, or -1. Empty unless the state is a flat tuple of
// arrays and its initial value a tuple.
std::vector<int> RepeatedLoopElements(const HloInstruction& loop);

// How many elements of the state of `loop` XLA removes: repeated ones and
// those that stay a literal.
int64_t RemovedLoopElements(const HloInstruction& loop);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_LOOP_SIMPLIFIER_H_
