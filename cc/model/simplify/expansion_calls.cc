#include "model/simplify/expansion_calls.h"

#include <map>

#include "ir/computation.h"

namespace exla {

std::string ExpansionSignature(const HloInstruction& instruction) {
  std::string signature(instruction.opcode_name());
  for (const HloInstruction* operand : instruction.operands()) signature += '|' + operand->shape().ToString(false);
  for (const char* key : {"left_side", "lower", "transpose_a", "unit_diagonal"}) {
    signature += '|' + instruction.RawAttribute(key).value_or("");
  }
  return signature;
}

bool ExpansionCalls::Run(HloModule* module) {
  std::map<std::string, int> callers;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kCholesky) || instruction->Is(HloOpcode::kTriangularSolve)) {
        ++callers[ExpansionSignature(*instruction)];
      }
    }
  }
  shared_->clear();
  for (const auto& [signature, count] : callers) {
    if (count > 1) shared_->insert(signature);
  }
  return false;
}

}  // namespace exla
