// The arithmetic of an instruction, counted the way a roofline would. The
// splitter's notes (what a loop recomputes) and the cost model (predicted
// time) both read it, so a flop means the same to both.
#ifndef EXLA_ANALYSIS_FLOPS_H_
#define EXLA_ANALYSIS_FLOPS_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Floating-point operations of one evaluation of `instruction`, counted the
// way a roofline would: two per multiply-add of a dot, one per input element
// of a reduce, one per result element of an elementwise operation, none for
// data movement (broadcast, reshape, transpose, slices, concatenate...).
int64_t InstructionFlops(const HloInstruction& instruction);

// Flops of the computation's instructions, with the bodies of the loops,
// calls and branches it runs counted once each (a lower bound for loops: the
// yardstick the recomputed work is compared with, not a prediction).
int64_t ComputationFlops(const HloComputation& computation);

// Elementwise functions that XLA evaluates with a polynomial per element
// (exp, log, tanh, ...): many times the work of an add. The cost model gives
// them a rate of their own.
bool IsTranscendental(const HloInstruction& instruction);

// The elementwise operations XLA CPU's fusion will not compute twice
// (CpuInstructionFusion::IsExpensive): the functions it evaluates with a
// polynomial or an iteration per element (exp, log, tanh, sqrt, power, the
// inverse and hyperbolic trigonometric functions), division and remainder of
// floating or complex numbers, and abs, sign, cos, sin and tan of complex
// numbers. Real cos, sin and tan are cheap there: fusion copies them into
// each reader, as it copies an add. Both the fusion stage and the tree
// reductions' layout copies (model/expand/tree_reduction.h) ask this.
bool IsExpensiveElementwise(const HloInstruction& instruction);

// Comparisons a sort makes: n log2 n for each row of n elements along its
// dimension. XLA CPU sorts each row with a comparator it calls per
// comparison, so the count, not the flops of the comparator, sets the time.
// 0 for anything but a sort.
int64_t SortComparisons(const HloInstruction& instruction);

// Elements a top-k selects from (XLA CPU keeps a k-element partial sort
// per row: a pass over the row, not a sort of it). 0 for anything else.
int64_t TopKElements(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_ANALYSIS_FLOPS_H_
