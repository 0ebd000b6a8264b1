#include "passes/tensor_splitter/exact_values.h"

#include <unordered_set>
#include <vector>

namespace exla {

bool ComputedExactly(const HloInstruction* producer) {
  std::vector<const HloInstruction*> stack = {producer};
  std::unordered_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* value = stack.back();
    stack.pop_back();
    if (!seen.insert(value).second) continue;
    switch (value->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kIota:
        continue;
      case HloOpcode::kAdd:
      case HloOpcode::kSubtract:
        for (const HloInstruction* operand : value->operands()) {
          if (operand->Is(HloOpcode::kMultiply)) return false;
        }
        break;
      case HloOpcode::kBroadcast:
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kTranspose:
      case HloOpcode::kCopy:
      case HloOpcode::kSlice:
      case HloOpcode::kConcatenate:
      case HloOpcode::kCompare:
      case HloOpcode::kSelect:
      case HloOpcode::kAnd:
      case HloOpcode::kOr:
      case HloOpcode::kNot:
      case HloOpcode::kConvert:
      case HloOpcode::kNegate:
      case HloOpcode::kAbs:
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum:
        break;
      default:
        return false;
    }
    for (const HloInstruction* operand : value->operands()) stack.push_back(operand);
  }
  return true;
}

}  // namespace exla
