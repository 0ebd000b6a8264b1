#include "model/simplify/reduce_of_negate.h"

#include <memory>
#include <string>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

// A reducer that adds its two parameters.
bool AddsItsParameters(const HloComputation* reducer) {
  if (reducer == nullptr || reducer->root() == nullptr) return false;
  const HloInstruction* root = reducer->root();
  return root->Is(HloOpcode::kAdd) && root->operand_count() == 2 &&
         root->operand(0)->Is(HloOpcode::kParameter) && root->operand(1)->Is(HloOpcode::kParameter) &&
         root->operand(0) != root->operand(1);
}

// A scalar literal zero (of either sign).
bool IsZero(const HloInstruction& value) {
  if (!value.Is(HloOpcode::kConstant) || !value.shape().IsArray() || value.shape().ElementCount() != 1) {
    return false;
  }
  const std::string& text = value.payload();
  return text == "0" || text == "-0" || text == "0.0" || text == "-0.0";
}

bool IsSumOfNegation(const HloInstruction& reduce) {
  return reduce.Is(HloOpcode::kReduce) && reduce.operand_count() == 2 && reduce.shape().IsArray() &&
         reduce.operand(0)->Is(HloOpcode::kNegate) && IsZero(*reduce.operand(1)) &&
         AddsItsParameters(reduce.CalledComputation("to_apply"));
}

// Replaces the sum `reduce` of a negation by the negation of the sum.
void NegateTheSum(HloComputation* computation, HloInstruction* reduce) {
  auto sum = std::make_unique<HloInstruction>(reduce->name() + ".of_negated", HloOpcode::kReduce, reduce->shape());
  sum->AppendOperand(reduce->operand(0)->operand(0));
  sum->AppendOperand(reduce->operand(1));
  sum->SetIntListAttribute("dimensions", reduce->dimensions());
  sum->SetCalledComputation("to_apply", reduce->CalledComputation("to_apply"));
  HloInstruction* summed = computation->AddInstruction(std::move(sum));
  auto negated = std::make_unique<HloInstruction>(reduce->name() + ".negated", HloOpcode::kNegate, reduce->shape());
  negated->AppendOperand(summed);
  reduce->ReplaceAllUsesWith(computation->AddInstruction(std::move(negated)));
}

}  // namespace

bool ReduceOfNegate::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsSumOfNegation(*instruction)) continue;
      NegateTheSum(computation.get(), instruction);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
