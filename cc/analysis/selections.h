// Selections a loop can merge chunk by chunk: a top-k along its last
// dimension, and an arg-min/arg-max (a reduce of values and their indices).
//
// Facts about one instruction, read by the dimension map (a merged
// selection reduces its dimension away, dimension_map.h) and by the tensor
// splitter's merge of such selections (passes/tensor_splitter/topk_merge.h).
#ifndef EXLA_ANALYSIS_SELECTIONS_H_
#define EXLA_ANALYSIS_SELECTIONS_H_

#include <cstdint>
#include <optional>

#include "ir/instruction.h"

namespace exla {

// A `topk` of an array.
bool IsTopK(const HloInstruction& instruction);

// A top-k's k=, kept as text by the IR (0 when it is not a plain number).
int64_t TopKSize(const HloInstruction& topk);

// The signed integer type as wide as `type`, which bitcast-converts to it.
std::optional<PrimitiveType> SameWidthInt(PrimitiveType type);

// Values a top-k's merge can order as XLA's top-k does: floating point in
// its total order (the order XLA's top-k and TensorFlow's sort comparator
// use), signed integers in theirs.
bool MergeableValueType(PrimitiveType type);

// An arg-min/arg-max: reduce(values, indices, init_value, init_index) over
// dimension `dim` alone, the indices an integer array, the reducer picking
// one of its two (value, index) pairs.
bool IsArgReduce(const HloInstruction& instruction, int64_t dim);

// Whether `instruction` selects over dimension `dim` of its operand
// `operand_index` in a way a loop can merge chunk by chunk: a `topk` along
// its last dimension, or a two-input reduce over `dim` alone whose reducer
// picks one (value, index) pair of its two (an arg-min/arg-max).
bool IsMergedSelection(const HloInstruction& instruction, int operand_index, int64_t dim);

}  // namespace exla

#endif  // EXLA_ANALYSIS_SELECTIONS_H_
