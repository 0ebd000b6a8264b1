#include "model/expand/leaf_bytes.h"

#include <algorithm>
#include <vector>

#include "model/simplify/xla_topk.h"

namespace exla {
namespace {

// Whether XLA CPU computes the dot `instruction` in f32: it has no bf16
// matrix multiply, so it converts a bf16 dot's operands to f32, multiplies
// in f32 and converts the product back.
bool IsWidenedDot(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kDot) && instruction.shape().IsArray() &&
         instruction.shape().element_type() == PrimitiveType::kBF16;
}

}  // namespace

int64_t LeafBytes(const HloInstruction& instruction, int64_t leaf, int64_t bytes) {
  // A bf16 dot writes an f32 product; a bf16 value that a dot reads is
  // written in f32 for it (the convert fuses into its producer).
  bool widened = IsWidenedDot(instruction);
  if (instruction.shape().IsArray() && instruction.shape().element_type() == PrimitiveType::kBF16) {
    for (const HloInstruction* user : instruction.users()) widened = widened || IsWidenedDot(*user);
  }
  if (widened) return 2 * bytes;
  if (!XlaRunsAsTopK(instruction)) return bytes;
  int64_t largest = 0;
  for (const HloInstruction* user : instruction.users()) {
    const bool element = user->Is(HloOpcode::kGetTupleElement);
    if (element && user->IntAttribute("index").value_or(-1) != leaf) continue;
    if (!element) largest = std::max(largest, user->shape().ByteSize());
    for (const HloInstruction* slice : element ? user->users() : std::vector<HloInstruction*>{}) {
      largest = std::max(largest, slice->shape().ByteSize());
    }
  }
  return std::min(bytes, largest);
}

}  // namespace exla
