// Which instructions XLA CPU's parallel task assigner outlines.
//
// Before buffer assignment, XLA's CPU pipeline outlines every large enough
// instruction that can be computed in independent pieces (an elementwise
// loop, a loop fusion, a broadcast, a reduce...) into a call of its own, so
// that the runtime can run the pieces on several threads. The outlined
// instruction then writes a buffer of its own: the call still holds its
// operands while the instruction writes its result, so an elementwise loop
// no longer writes over an operand that dies there. A chain like
// dot -> exponential -> dot thus holds both the dot's result and the
// exponential's at once, where the unoutlined chain would hold one.
//
// Which instructions: those of the entry, of while bodies and of called
// computations (not of conditional branches or loop conditions), that may
// run as a parallel loop, are not tuple-shaped and are not an in-place
// dynamic-update-slice, and whose cost asks for at least two threads.
// A memory-bound loop (no more flops than bytes accessed: almost every
// loop) asks for one thread per 256 KiB it reads and writes, and XLA allows
// it the square root of the machine's threads (2 or more on any machine
// with 2 cores or more): a loop that reads and writes 512 KiB or more is
// outlined (an exponential of a 256 KiB matrix is). A compute-bound loop
// costs flops + 2 transcendentals + 10 bytes, 100000 per thread. The model
// takes a machine with at least two cores: on one core nothing is
// outlined, and the model then errs high.
#ifndef EXLA_MODEL_FUSION_PARALLEL_TASKS_H_
#define EXLA_MODEL_FUSION_PARALLEL_TASKS_H_

#include <cstdint>
#include <unordered_set>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/module.h"

namespace exla {

// The computations whose instructions the assigner may outline: the entry,
// and the bodies of its while loops and the computations of its calls,
// transitively.
std::unordered_set<const HloComputation*> ParallelTaskComputations(const HloModule& module);

// What XLA's cost analysis counts for one loop (an instruction and the
// producers fusion folds into it).
struct LoopWork {
  int64_t bytes = 0;            // read from its operands' buffers and written
  int64_t flops = 0;            // elementwise operations, one per element
  int64_t transcendentals = 0;  // exponentials, logarithms... one per element
};

// Whether XLA outlines `instruction` (which the model has write a buffer
// of its own, after fusion, at `cost`) into a parallel call, given that it
// lies in one of the computations above.
bool OutlinedForParallelTasks(const HloInstruction& instruction, const LoopWork& cost);

// Whether XLA computes `instruction` inside a call of its own, whose
// result the loop that reads it does not write over: Eigen runs only f32
// and f16 convolutions, and XLA emits any other as a loop nest that its
// parallel task assigner outlines into a call.
bool InParallelCall(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_PARALLEL_TASKS_H_
