#include "model/simplify/reshape_equivalents.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

bool KeepsElementCount(const HloInstruction& instruction) {
  const HloInstruction& operand = *instruction.operand(0);
  return instruction.shape().IsArray() && operand.shape().IsArray() &&
         instruction.shape().ElementCount() == operand.shape().ElementCount();
}

// A broadcast that only inserts dimensions of size 1.
bool IsReshapingBroadcast(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kBroadcast) || instruction.operand_count() != 1) return false;
  const std::vector<int64_t> dims = instruction.dimensions();
  return std::is_sorted(dims.begin(), dims.end()) && KeepsElementCount(instruction);
}

// A reduce of one array over dimensions of size 1 (a reduce of several
// arrays returns a tuple, which XLA leaves).
bool IsReshapingReduce(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kReduce) && instruction.operand_count() == 2 &&
         KeepsElementCount(instruction);
}

// The reshape of its operand that `instruction` stands for, or nullptr.
HloInstruction* ReshapeOf(const HloInstruction& instruction) {
  if (!IsReshapingBroadcast(instruction) && !IsReshapingReduce(instruction)) return nullptr;
  HloInstruction* operand = instruction.operand(0);
  if (operand->shape() == instruction.shape()) return operand;
  return instruction.parent()->Add(HloOpcode::kReshape, instruction.shape(), {operand},
                                   instruction.name() + ".reshape");
}

}  // namespace

bool ReshapeEquivalents::Run(HloModule* module) { return ApplyReplacements(module, ReshapeOf); }

}  // namespace exla
