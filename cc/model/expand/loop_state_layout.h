// The copy XLA's layout assignment makes of a while loop's initial state
// when an element of it comes in a layout other than the loop's.
//
// Layout assignment (xla/service/layout_assignment.cc) gives a loop's body
// and condition computations, which are not the entry, the default
// (row-major) layout, whatever the module declares; the while's operand must
// then match it. A transpose whose only reader forwards it (the tuple that
// is the loop's initial state) gets no row-major constraint from the CPU
// backend (cpu_layout_assignment.cc skips forwarded operands), so it takes
// the layout that makes it a bitcast of its operand: a column-major value
// for a real transpose. ReshapeMover first sinks a transpose below the
// unary elementwise ops that read it, so tanh(transpose(x)) is such a
// transpose too. XLA copies that element into the loop's layout just
// before the loop, while the transposed value is still alive.
#ifndef EXLA_MODEL_EXPAND_LOOP_STATE_LAYOUT_H_
#define EXLA_MODEL_EXPAND_LOOP_STATE_LAYOUT_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Bytes of the layout copies XLA makes of the initial state of the while
// loop `loop` (0 for any other instruction), alive at the loop's start.
int64_t LoopStateLayoutCopyBytes(const HloInstruction& loop);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_LOOP_STATE_LAYOUT_H_
