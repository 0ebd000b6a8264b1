#include "pass/dce.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace exla {
namespace {

// A computation has side effects if any instruction in it, or in anything it
// calls, has one. Memoised because while bodies and reducers are shared.
bool HasSideEffect(const HloComputation* computation,
                   std::unordered_map<const HloComputation*, bool>* memo) {
  auto it = memo->find(computation);
  if (it != memo->end()) return it->second;
  (*memo)[computation] = false;  // recursion guard
  bool result = false;
  for (const auto& instruction : computation->instructions()) {
    if (instruction->HasSideEffectNoRecurse()) {
      result = true;
      break;
    }
    for (const HloComputation* callee : instruction->called_computations()) {
      if (HasSideEffect(callee, memo)) {
        result = true;
        break;
      }
    }
    if (result) break;
  }
  (*memo)[computation] = result;
  return result;
}

bool HasSideEffect(const HloInstruction& instruction,
                   std::unordered_map<const HloComputation*, bool>* memo) {
  if (instruction.HasSideEffectNoRecurse()) return true;
  for (const HloComputation* callee : instruction.called_computations()) {
    if (HasSideEffect(callee, memo)) return true;
  }
  return false;
}

bool IsRemovable(const HloInstruction* instruction,
                 std::unordered_map<const HloComputation*, bool>* memo) {
  if (IsUsed(*instruction)) return false;
  // Parameters define the computation's signature.
  if (instruction->Is(HloOpcode::kParameter)) return false;
  // Ordering constraints are part of the program.
  if (!instruction->control_successors().empty()) return false;
  return !HasSideEffect(*instruction, memo);
}

// Removes dead instructions of one computation, users first so that their
// operands become dead in the same sweep.
bool RemoveDeadInstructions(HloComputation* computation,
                            std::unordered_map<const HloComputation*, bool>* memo) {
  bool changed = false;
  std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (IsRemovable(*it, memo)) {
      computation->RemoveInstruction(*it);
      changed = true;
    }
  }
  return changed;
}

// Computations reachable from the entry through called computations.
std::unordered_set<const HloComputation*> ReachableComputations(const HloModule& module) {
  std::unordered_set<const HloComputation*> reachable;
  std::vector<const HloComputation*> stack = {module.entry()};
  while (!stack.empty()) {
    const HloComputation* computation = stack.back();
    stack.pop_back();
    if (!reachable.insert(computation).second) continue;
    for (const auto& instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) {
        stack.push_back(callee);
      }
    }
  }
  return reachable;
}

}  // namespace

bool HasSideEffect(const HloInstruction& instruction) {
  std::unordered_map<const HloComputation*, bool> memo;
  return HasSideEffect(instruction, &memo);
}

bool IsUsed(const HloInstruction& instruction) {
  return instruction.user_count() > 0 || instruction.parent()->root() == &instruction;
}

bool RemoveDeadInstructions(HloComputation* computation) {
  std::unordered_map<const HloComputation*, bool> memo;
  return RemoveDeadInstructions(computation, &memo);
}

void RemoveDeadChain(HloInstruction* instruction, std::unordered_set<HloInstruction*>* tracked) {
  std::unordered_map<const HloComputation*, bool> memo;
  std::vector<HloInstruction*> stack = {instruction};
  bool first = true;
  while (!stack.empty()) {
    HloInstruction* current = stack.back();
    stack.pop_back();
    // An operand can be pushed twice before it is removed; once removed it
    // is no longer tracked (and no longer exists), so check before touching it.
    if (!first && !tracked->count(current)) continue;
    first = false;
    if (!IsRemovable(current, &memo)) continue;
    std::vector<HloInstruction*> operands = current->operands();
    std::sort(operands.begin(), operands.end());
    operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
    tracked->erase(current);
    current->parent()->RemoveInstruction(current);
    for (HloInstruction* operand : operands) {
      if (tracked->count(operand)) stack.push_back(operand);
    }
  }
}

bool DeadCodeElimination::Run(HloModule* module) {
  bool changed = false;
  std::unordered_map<const HloComputation*, bool> memo;
  for (const auto& computation : module->computations()) {
    changed |= RemoveDeadInstructions(computation.get(), &memo);
  }
  std::unordered_set<const HloComputation*> reachable = ReachableComputations(*module);
  std::vector<HloComputation*> unreachable;
  for (const auto& computation : module->computations()) {
    if (!reachable.count(computation.get())) unreachable.push_back(computation.get());
  }
  for (HloComputation* computation : unreachable) {
    module->RemoveComputation(computation);
    changed = true;
  }
  return changed;
}

}  // namespace exla
