// How a split dimension flows through one instruction.
//
// The tensor splitter follows one dimension of an oversized tensor through the
// program: up to the producers that can be sliced cheaply and down to the
// consumer that makes the tensor small again. These functions answer, for a
// single instruction, "which dimension of the operand (or result) is this
// dimension?" and "does the instruction reduce it away?". Anything they do not
// understand is reported as kNotSplittable, and the splitter then leaves the
// program as it was.
#ifndef EXLA_PASSES_SPLIT_DIMENSION_MAP_H_
#define EXLA_PASSES_SPLIT_DIMENSION_MAP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/instruction.h"

namespace exla {

// Special answers of the mapping functions.
constexpr int64_t kNotSplittable = -2;  // the instruction cannot be split on it
constexpr int64_t kNoDimension = -1;    // the operand does not carry it (use it whole)
constexpr int64_t kReducedAway = -3;    // the result no longer has it (accumulate)

// The operand dimension that result dimension `dim` of `instruction` comes
// from, for operand `operand_index`; kNoDimension if that operand is used
// whole for every slice; kNotSplittable if slicing the result along `dim`
// cannot be computed from slices of the operands.
int64_t OperandDimension(const HloInstruction& instruction, int64_t dim, int operand_index);

// The result dimension that operand dimension `dim` (of operand
// `operand_index`) becomes; kReducedAway if the instruction sums/maxes it
// away; kNotSplittable if the instruction cannot be computed slice by slice.
int64_t ResultDimension(const HloInstruction& instruction, int operand_index, int64_t dim);

// For a reduce/dot that reduces the split dimension: the elementwise opcode
// that combines partial results (kAdd, kMaximum, ...), or nullopt if partial
// results cannot be combined (non-associative reducer, non-identity init).
std::optional<HloOpcode> AccumulationOpcode(const HloInstruction& instruction);

// Why `instruction` cannot be split (for log lines); empty if it can.
std::string UnsplittableReason(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_PASSES_SPLIT_DIMENSION_MAP_H_
