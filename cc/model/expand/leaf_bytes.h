// The bytes XLA CPU writes for a value, where they differ from its shape's.
//
// XLA CPU has no bf16 matrix multiply: it converts a bf16 dot's operands to
// f32, multiplies in f32 and converts the product back, so the dot and the
// bf16 values it reads are written in f32. A sort XLA runs as its top-k
// kernel (xla_topk.h) writes only the k leading elements its readers slice.
#ifndef EXLA_MODEL_EXPAND_LEAF_BYTES_H_
#define EXLA_MODEL_EXPAND_LEAF_BYTES_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Bytes of leaf `leaf` of what `instruction` defines as XLA CPU writes it;
// `bytes` is the leaf's size by its shape.
int64_t LeafBytes(const HloInstruction& instruction, int64_t leaf, int64_t bytes);

}  // namespace exla

#endif  // EXLA_MODEL_EXPAND_LEAF_BYTES_H_
