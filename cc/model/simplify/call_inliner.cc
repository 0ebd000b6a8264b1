#include "model/simplify/call_inliner.h"

#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "ir/control_flow.h"

namespace exla {
namespace {

// Replaces `call` by the instructions of the computation it calls, its
// parameters by the call's operands, adding the calls among the copies to
// `calls`; returns whether it did.
bool InlineOne(HloInstruction* call, std::vector<HloInstruction*>* calls) {
  const HloComputation* callee = call->CalledComputation("to_apply");
  if (callee == nullptr) return false;
  HloInstruction* result = InlineComputation(*callee, call->operands(), call->parent(), calls);
  if (result != nullptr) ReplaceAndRemove(call, result);
  return result != nullptr;
}

}  // namespace

HloInstruction* CopyInstruction(const HloInstruction& original, const std::vector<HloInstruction*>& operands,
                                HloComputation* into) {
  auto copy = std::make_unique<HloInstruction>(original.name(), original.opcode_name(), original.shape());
  copy->set_payload(original.payload());
  *copy->mutable_attributes() = original.attributes();
  for (HloInstruction* operand : operands) copy->AppendOperand(operand);
  return into->AddInstruction(std::move(copy));
}

HloInstruction* InlineComputation(const HloComputation& callee, const std::vector<HloInstruction*>& arguments,
                                  HloComputation* caller, std::vector<HloInstruction*>* calls) {
  std::unordered_map<const HloInstruction*, HloInstruction*> copy_of;
  for (const HloInstruction* instruction : callee.MakeInstructionPostOrder()) {
    if (instruction->Is(HloOpcode::kParameter)) {
      const int64_t number = instruction->parameter_number();
      if (number < 0 || number >= static_cast<int64_t>(arguments.size())) return nullptr;
      copy_of[instruction] = arguments[number];
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* operand : instruction->operands()) operands.push_back(copy_of.at(operand));
    HloInstruction* copy = CopyInstruction(*instruction, operands, caller);
    copy_of[instruction] = copy;
    if (copy->Is(HloOpcode::kCall)) calls->push_back(copy);
  }
  return copy_of.at(callee.root());
}

void ReplaceAndRemove(HloInstruction* instruction, HloInstruction* result) {
  HloComputation* computation = instruction->parent();
  const bool was_root = computation->root() == instruction;
  instruction->ReplaceAllUsesWith(result);
  if (was_root) computation->set_root(result);
  instruction->DropAllControlDependencies();
  instruction->DetachOperands();
  computation->RemoveInstruction(instruction);
}

bool CallInliner::Run(HloModule* module) {
  std::vector<HloInstruction*> calls;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kCall)) calls.push_back(instruction.get());
    }
  }
  bool changed = false;
  while (!calls.empty()) {
    HloInstruction* call = calls.back();
    calls.pop_back();
    changed = InlineOne(call, &calls) || changed;
  }
  return changed;
}

}  // namespace exla
