#include "model/simplify/common_subexpressions.h"

#include <optional>
#include <utility>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "ir/control_flow.h"
#include "ir/pattern_matcher.h"
#include "pass/dce.h"

namespace exla {
namespace {

// Instructions CSE leaves alone: parameters, anything with a side effect,
// and control flow (XLA merges loops only when their computations are
// equal, which the frameworks' lowerings never repeat).
bool Mergeable(const HloInstruction& instruction) {
  if (IsControlFlow(instruction.opcode())) return false;
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kCustomCall:
    case HloOpcode::kRngBitGenerator:
      return false;
    default:
      return !instruction.HasSideEffectNoRecurse();
  }
}

// Keys of instructions: equal keys mean XLA's CSE merges them. Operands are
// named by the number of the instruction that stands for them, called
// computations by their structure (a reduction's adder lowered twice under
// two names is still one adder).
class Keys {
 public:
  std::string Of(const HloInstruction& instruction, const std::unordered_map<const HloInstruction*, int>& ids) {
    std::string key(instruction.opcode_name());
    key += '|';
    instruction.shape().AppendTo(&key, false);
    key += '|';
    key += instruction.payload();
    for (const HloInstruction* operand : instruction.operands()) {
      auto id = ids.find(operand);
      key += '|' + std::to_string(id == ids.end() ? -1 : id->second);
    }
    for (const HloAttribute& attribute : instruction.attributes()) {
      if (attribute.key == "metadata") continue;
      key += '|' + attribute.key + '=';
      if (attribute.computations.empty()) key += attribute.value;
      for (const HloComputation* called : attribute.computations) key += Structure(*called) + ';';
    }
    return key;
  }

 private:
  // The instructions of `computation` in post order, by their keys.
  const std::string& Structure(const HloComputation& computation) {
    auto cached = structures_.find(&computation);
    if (cached != structures_.end()) return cached->second;
    std::unordered_map<const HloInstruction*, int> ids;
    std::string structure = "{";
    for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
      ids[instruction] = static_cast<int>(ids.size());
      structure += Of(*instruction, ids) + (instruction == computation.root() ? "!" : "") + '\n';
    }
    return structures_[&computation] = structure + "}";
  }

  std::unordered_map<const HloComputation*, std::string> structures_;
};

bool IsSplat(const HloInstruction& instruction, double value) {
  const std::optional<double> splat = SplatConstantValue(&instruction);
  return splat.has_value() && *splat == value;
}

// The operand `instruction` equals when it adds or subtracts zero, or
// multiplies or divides by one: XLA's algebraic simplifier, which runs
// before CSE, replaces it by that operand (so that x + 0 + 1 and x + 1 merge).
HloInstruction* IdentityOperand(const HloInstruction& instruction) {
  if (instruction.operand_count() != 2 || !instruction.shape().IsArray()) return nullptr;
  HloInstruction* a = instruction.operand(0);
  HloInstruction* b = instruction.operand(1);
  const auto same = [&](const HloInstruction* x) { return x->shape().Compatible(instruction.shape()); };
  switch (instruction.opcode()) {
    case HloOpcode::kAdd:
      if (IsSplat(*b, 0) && same(a)) return a;
      return IsSplat(*a, 0) && same(b) ? b : nullptr;
    case HloOpcode::kSubtract:
      return IsSplat(*b, 0) && same(a) ? a : nullptr;
    case HloOpcode::kMultiply:
      if (IsSplat(*b, 1) && same(a)) return a;
      return IsSplat(*a, 1) && same(b) ? b : nullptr;
    case HloOpcode::kDivide:
      return IsSplat(*b, 1) && same(a) ? a : nullptr;
    default:
      return nullptr;
  }
}

// When `instruction` adds a one-element literal to a value (perhaps itself
// such a sum), that value (its id) and the sum of the literals: XLA's
// simplifier folds (x + 1) + 1 into x + 2, which then merges with an x + 2
// written as such.
std::optional<std::pair<int, double>> ConstantSum(
    const HloInstruction& instruction, const std::unordered_map<const HloInstruction*, int>& ids,
    const std::unordered_map<const HloInstruction*, std::pair<int, double>>& sums) {
  if (!instruction.Is(HloOpcode::kAdd) || instruction.operand_count() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const HloInstruction* value = instruction.operand(side);
    const std::optional<double> literal = SplatConstantValue(instruction.operand(1 - side));
    if (!literal.has_value() || !value->shape().Compatible(instruction.shape())) continue;
    auto sum = sums.find(value);
    if (sum != sums.end()) return std::make_pair(sum->second.first, sum->second.second + *literal);
    auto id = ids.find(value);
    if (id != ids.end()) return std::make_pair(id->second, *literal);
  }
  return std::nullopt;
}

// The instruction each mergeable instruction of `computation` stands for
// (the first with its key, or the operand it leaves unchanged), for those
// that are not their own.
std::unordered_map<HloInstruction*, HloInstruction*> Duplicates(const HloComputation& computation, Keys* keys) {
  std::unordered_map<HloInstruction*, HloInstruction*> duplicates;
  std::unordered_map<const HloInstruction*, int> ids;
  std::unordered_map<std::string, HloInstruction*> first;
  std::unordered_map<const HloInstruction*, std::pair<int, double>> sums;
  for (HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    // Operands that are duplicates are named by what they stand for.
    int id = static_cast<int>(ids.size());
    HloInstruction* identity = computation.root() == instruction ? nullptr : IdentityOperand(*instruction);
    if (identity != nullptr) {
      auto stands_for = duplicates.find(identity);
      duplicates[instruction] = stands_for == duplicates.end() ? identity : stands_for->second;
      id = ids[identity];
    } else if (Mergeable(*instruction)) {
      std::string key = keys->Of(*instruction, ids);
      if (std::optional<std::pair<int, double>> sum = ConstantSum(*instruction, ids, sums)) {
        sums[instruction] = *sum;
        key = "+" + instruction->shape().ToString(false) + '|' + std::to_string(sum->first) + '|' +
              std::to_string(sum->second);
      }
      auto [it, inserted] = first.emplace(key, instruction);
      if (!inserted) {
        duplicates[instruction] = it->second;
        id = ids[it->second];
      }
    }
    ids[instruction] = id;
  }
  return duplicates;
}

}  // namespace

bool CommonSubexpressionElimination::Run(HloModule* module) {
  Keys keys;
  bool changed = false;
  for (const auto& computation : module->computations()) {
    const std::unordered_map<HloInstruction*, HloInstruction*> duplicates = Duplicates(*computation, &keys);
    if (duplicates.empty()) continue;
    // In post order, not the map's order by address: the order of the
    // replacements is the order of the originals' users.
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      auto duplicate = duplicates.find(instruction);
      if (duplicate != duplicates.end()) instruction->ReplaceAllUsesWith(duplicate->second);
    }
    RemoveDeadInstructions(computation.get());
    changed = true;
  }
  return changed;
}

}  // namespace exla
