// The literals an XLA CPU executable keeps.
//
// A literal that fusion folds into a loop is compiled into the loop's
// code; any other is an allocation of the executable, which the memory a
// program needs includes. XLA's fusion folds a literal into a consumer only
// to make a fusion: an instruction that fuses nothing else (an add of a loop
// counter and 1, a loop condition's compare, the initial value of a reduce
// of a parameter) stays a lone instruction that reads the literal's buffer.
// Arrays other than scalars are always kept. XLA's common subexpression
// elimination merges equal literals of a computation, so each is kept once.
// XLA's expansions of triangular solves that share a signature keep a
// copy each of a literal right-hand side. XLA sinks a literal that a
// loop's body only reads through its state into the body: the body keeps
// a copy of its own.
#ifndef EXLA_MODEL_BUFFERS_LITERALS_H_
#define EXLA_MODEL_BUFFERS_LITERALS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/computation.h"

namespace exla {

// Bytes of the literals of `computations` the executable keeps; `folded`
// says whether fusion folds an instruction into its readers.
int64_t KeptLiteralBytes(const std::vector<const HloComputation*>& computations,
                         const std::function<bool(const HloInstruction&)>& folded);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_LITERALS_H_
