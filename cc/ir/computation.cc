#include "ir/computation.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "ir/module.h"

namespace exla {

std::vector<HloInstruction*> HloComputation::parameters() const {
  std::vector<HloInstruction*> params;
  for (const auto& instruction : instructions_) {
    if (instruction->Is(HloOpcode::kParameter)) params.push_back(instruction.get());
  }
  std::sort(params.begin(), params.end(), [](HloInstruction* a, HloInstruction* b) {
    return a->parameter_number() < b->parameter_number();
  });
  return params;
}

HloInstruction* HloComputation::parameter(int64_t number) const {
  for (const auto& instruction : instructions_) {
    if (instruction->Is(HloOpcode::kParameter) && instruction->parameter_number() == number) {
      return instruction.get();
    }
  }
  return nullptr;
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  if (parent_ != nullptr) {
    instruction->set_name(parent_->UniqueName(instruction->name()));
  }
  instruction->parent_ = this;
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

void HloComputation::AddParsedInstruction(std::unique_ptr<HloInstruction> instruction) {
  if (parent_ != nullptr) parent_->ReserveName(instruction->name());
  instruction->parent_ = this;
  instructions_.push_back(std::move(instruction));
}

HloInstruction* HloComputation::Add(HloOpcode opcode, Shape shape,
                                    std::vector<HloInstruction*> operands, std::string name_hint) {
  if (name_hint.empty()) name_hint = std::string(HloOpcodeString(opcode));
  auto instruction = std::make_unique<HloInstruction>(std::move(name_hint), opcode, std::move(shape));
  for (HloInstruction* operand : operands) instruction->AppendOperand(operand);
  return AddInstruction(std::move(instruction));
}

void HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction == root_) {
    throw std::logic_error("cannot remove the root instruction " + instruction->name());
  }
  if (instruction->user_count() != 0) {
    throw std::logic_error("cannot remove " + instruction->name() + ": it still has users");
  }
  instruction->DetachOperands();
  instruction->DropAllControlDependencies();
  if (parent_ != nullptr) parent_->ReleaseName(instruction->name());
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  if (it != instructions_.end()) instructions_.erase(it);
}

void HloComputation::ReplaceInstruction(HloInstruction* old_instruction,
                                        HloInstruction* new_instruction) {
  old_instruction->ReplaceAllUsesWith(new_instruction);
  if (old_instruction->user_count() == 0 && old_instruction != root_) {
    RemoveInstruction(old_instruction);
  }
}

HloInstruction* HloComputation::FindInstruction(const std::string& name) const {
  for (const auto& instruction : instructions_) {
    if (instruction->name() == name) return instruction.get();
  }
  return nullptr;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Iterative DFS that visits instructions in stored order and emits every
  // operand (and control predecessor) before its user. For text XLA printed
  // the stored order is already a post order, so it comes out unchanged.
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  std::unordered_set<const HloInstruction*> emitted;
  std::unordered_set<const HloInstruction*> on_stack;
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (const auto& start : instructions_) {
    if (emitted.count(start.get())) continue;
    stack.push_back({start.get(), 0});
    on_stack.insert(start.get());
    while (!stack.empty()) {
      HloInstruction* current = stack.back().first;
      size_t& next = stack.back().second;
      size_t n_operands = current->operands().size();
      size_t n_total = n_operands + current->control_predecessors().size();
      if (next < n_total) {
        HloInstruction* dep = next < n_operands ? current->operands()[next]
                                                : current->control_predecessors()[next - n_operands];
        ++next;
        if (!emitted.count(dep) && !on_stack.count(dep)) {
          stack.push_back({dep, 0});
          on_stack.insert(dep);
        }
        continue;
      }
      order.push_back(current);
      emitted.insert(current);
      on_stack.erase(current);
      stack.pop_back();
    }
  }
  return order;
}

bool DependsOn(const HloInstruction* value, const std::vector<const HloInstruction*>& sources) {
  std::vector<const HloInstruction*> stack = {value};
  std::unordered_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* h = stack.back();
    stack.pop_back();
    if (std::find(sources.begin(), sources.end(), h) != sources.end()) return true;
    if (!seen.insert(h).second) continue;
    for (const HloInstruction* operand : h->operands()) stack.push_back(operand);
  }
  return false;
}

}  // namespace exla
