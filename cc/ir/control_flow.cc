#include "ir/control_flow.h"

#include <algorithm>
#include <unordered_set>

namespace exla {

bool IsControlFlow(HloOpcode opcode) {
  return opcode == HloOpcode::kWhile || opcode == HloOpcode::kConditional || opcode == HloOpcode::kCall;
}

std::vector<const HloComputation*> RunComputations(const HloInstruction& instruction) {
  std::vector<const HloComputation*> result;
  switch (instruction.opcode()) {
    case HloOpcode::kWhile:
      result.push_back(instruction.CalledComputation("condition"));
      result.push_back(instruction.CalledComputation("body"));
      break;
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
      for (const HloComputation* c : instruction.called_computations()) result.push_back(c);
      break;
    default:
      break;
  }
  result.erase(std::remove(result.begin(), result.end(), nullptr), result.end());
  return result;
}

std::vector<HloComputation*> ControlFlowComputations(const HloModule& module) {
  std::vector<HloComputation*> order = {module.entry()};
  std::unordered_set<const HloComputation*> seen = {module.entry()};
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& instruction : order[i]->instructions()) {
      if (!IsControlFlow(instruction->opcode())) continue;
      for (HloComputation* called : instruction->called_computations()) {
        if (called != nullptr && seen.insert(called).second) order.push_back(called);
      }
    }
  }
  return order;
}

}  // namespace exla
