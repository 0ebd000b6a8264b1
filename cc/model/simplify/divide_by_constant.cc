#include "model/simplify/divide_by_constant.h"

#include <memory>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

bool IsLiteral(const HloInstruction& instruction) { return instruction.Is(HloOpcode::kConstant); }

bool IsLiteralOrItsBroadcast(const HloInstruction& instruction) {
  return IsLiteral(instruction) ||
         (instruction.Is(HloOpcode::kBroadcast) && IsLiteral(*instruction.operand(0)));
}

// XLA inverts literals of floating-point and complex types only.
bool IsDivisionByLiteral(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kDivide) || !instruction.shape().IsArray()) return false;
  const PrimitiveType type = instruction.shape().element_type();
  if (!IsFloatingPointType(type) && !IsComplexType(type)) return false;
  return !IsLiteral(*instruction.operand(0)) && IsLiteralOrItsBroadcast(*instruction.operand(1));
}

}  // namespace

bool DivideByConstant::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> divisions;
    for (const auto& instruction : computation->instructions()) {
      if (IsDivisionByLiteral(*instruction)) divisions.push_back(instruction.get());
    }
    for (HloInstruction* division : divisions) {
      auto product = std::make_unique<HloInstruction>(division->name() + ".reciprocal",
                                                      HloOpcode::kMultiply, division->shape());
      product->AppendOperand(division->operand(0));
      product->AppendOperand(division->operand(1));
      division->ReplaceAllUsesWith(computation->AddInstruction(std::move(product)));
    }
    if (!divisions.empty()) RemoveDeadInstructions(computation.get());
    any = any || !divisions.empty();
  }
  return any;
}

}  // namespace exla
