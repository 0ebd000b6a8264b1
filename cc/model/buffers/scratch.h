// What XLA's expansions and layout copies hold beside the values.
//
// An instruction XLA expands (expand/expansions.h) holds scratch while it
// runs, the pointer table, counter and condition of the loop it runs, and
// what it computes from no operand, from the start of its computation. A
// convolution's operands in another layout are transposed into copies
// (expand/convolution_layout.h), and a prologue computes from the kernel
// alone. The model does not place these values one by one: it adds them
// as scratch buffers of the instruction.
#ifndef EXLA_MODEL_BUFFERS_SCRATCH_H_
#define EXLA_MODEL_BUFFERS_SCRATCH_H_

#include <cstdint>
#include <vector>

#include "model/buffers/buffer_analyses.h"
#include "model/buffers/memory_model.h"

namespace exla {

// Adds the scratch, loop table, layout copies, small values and prologue of
// `instruction` (at `step`) to `lives`.
void AddExpansionBuffers(const BufferAnalyses& analyses, const HloInstruction& instruction, int64_t step,
                         std::vector<HeapBuffer>* lives);

// Adds what inlined expansions compute from no operand (ExpansionEarlyBytes),
// alive from the start of their computation to the last expansion that
// reads it. An expansion XLA leaves a call computes it when called, with
// the rest of its scratch. XLA's CSE merges the equal ones: a Cholesky's
// mask of one size; a solve's blocks of one size and triangle (the
// identity they start from differs).
void AddEarlyExpansionValues(const BufferAnalyses& analyses, std::vector<HeapBuffer>* lives);

// The steps of the instructions XLA expands into a loop or a chain of
// small values that the model counts as scratch at the instruction's step
// rather than placing them one by one: those values may hold any result's
// allocation then, so no temporary alive at such a step takes one.
std::vector<int64_t> ExpansionSteps(const ModuleSchedule& schedule);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_SCRATCH_H_
