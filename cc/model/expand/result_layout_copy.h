// The copy XLA's layout assignment makes of an entry result computed
// transposed.
//
// XLA compiles the module through StableHLO, whose export to HLO gives a
// transpose the layout that makes it a bitcast of its operand (column-major
// for a real transpose), and a tuple the layouts of its elements; layout
// assignment (xla/service/layout_assignment.cc) keeps the root tuple's
// element in that layout and, the entry's result layout being the default
// row-major one, adds a copy of the element into it. Fusion runs while the
// copy still reads the element through the old tuple, so the transposing
// loop writes a temporary of its own, and the copy, a step of its own in the
// breadth-first schedule, writes the result: both alive together, the
// temporary from its loop to the copy. The same holds below the unary
// elementwise ops ReshapeMover sinks the transpose under (the element is
// then that op, computed in the transposed layout).
//
// No such temporary where the transpose reads a value held in a buffer of
// its own, which fusion does not take into the transposing loop (a
// parameter, a literal, a value other loops read too: the transpose is a
// bitcast of it, which the copy reads in place), where the
// transpose moves no element in row-major order (a bitcast), or where the
// root is the transpose itself (the result constraint lands on it and the
// copy fuses into its loop); checked against XLA's buffer assignment on
// small modules (tests/cc/model/expand/result_layout_copy_test.cc).
#ifndef EXLA_MODEL_EXPAND_RESULT_LAYOUT_COPY_H_
#define EXLA_MODEL_EXPAND_RESULT_LAYOUT_COPY_H_

#include <cstdint>
#include <functional>

#include "ir/instruction.h"

namespace exla {

// Bytes of the temporary XLA writes `value` to before copying it into the
// entry's result (0 where it writes the result directly): `value` is an
// element of the entry's root tuple (or the operand of a reshape there that
// keeps its shape), computed transposed. `in_buffer` tells whether the
// operand of a transpose is held in a buffer of its own.
int64_t ResultLayoutCopyBytes(const HloInstruction& value,
                              const std::function<bool(const HloInstruction&)>& in_buffer);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_RESULT_LAYOUT_COPY_H_
