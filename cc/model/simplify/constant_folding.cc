#include "model/simplify/constant_folding.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/control_flow.h"
#include "ir/literal_text.h"
#include "pass/dce.h"

namespace exla {
namespace {

// XLA folds nothing larger than this many elements (result or operands).
constexpr int64_t kMaximumConstantSizeElements = 45 * 1000 * 1000;

bool IsLiteral(const HloInstruction& instruction) { return instruction.Is(HloOpcode::kConstant); }

// An operand that leaves its reader foldable: a literal, a broadcast of one
// or an iota.
bool IsLiteralLike(const HloInstruction& operand) {
  if (IsLiteral(operand) || operand.Is(HloOpcode::kIota)) return true;
  return operand.Is(HloOpcode::kBroadcast) && operand.operand_count() == 1 && IsLiteral(*operand.operand(0));
}

// Opcodes XLA never folds: broadcasts and iotas (they would only grow),
// loops, FFTs, and what its evaluator cannot or must not run.
bool NeverFolded(const HloInstruction& instruction) {
  if (IsControlFlow(instruction.opcode())) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kFft:
    case HloOpcode::kCustomCall:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kOther:
      return true;
    default:
      return instruction.HasSideEffectNoRecurse() || !instruction.control_predecessors().empty();
  }
}

bool Foldable(const HloInstruction& instruction) {
  if (NeverFolded(instruction) || !instruction.shape().IsArray() || instruction.operand_count() == 0) return false;
  bool any_literal = false;
  int64_t elements = instruction.shape().ElementCount();
  for (const HloInstruction* operand : instruction.operands()) {
    if (!IsLiteralLike(*operand)) return false;
    any_literal = any_literal || IsLiteral(*operand);
    if (operand->shape().IsArray()) elements = std::max(elements, operand->shape().ElementCount());
  }
  return any_literal && elements <= kMaximumConstantSizeElements;
}

// The literal a reshape reads, or nullptr.
const HloInstruction* ReshapedLiteral(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kReshape) && !instruction.Is(HloOpcode::kBitcast)) return nullptr;
  return IsLiteral(*instruction.operand(0)) ? instruction.operand(0) : nullptr;
}

// The text of the literal `instruction` folds into: a digest of the
// expression (opcode, shape, attributes, operands' texts), so that two
// foldings of equal expressions give equal literals. A reshape of a
// literal keeps its values, in the same row-major order: a later rewrite
// may read them (regular_literals.h).
std::string FoldedText(const HloInstruction& instruction) {
  if (const HloInstruction* literal = ReshapedLiteral(instruction)) {
    const auto values = LiteralValues(literal->payload(), literal->shape());
    if (values && instruction.shape().rank() > 0) return LiteralText(*values, instruction.shape().dims());
  }
  std::string expression(instruction.opcode_name());
  instruction.shape().AppendTo(&expression, false);
  for (const HloAttribute& attribute : instruction.attributes()) {
    if (attribute.key != "metadata") expression += '|' + attribute.key + '=' + attribute.value;
  }
  for (const HloInstruction* operand : instruction.operands()) {
    expression += '|' + std::string(operand->opcode_name()) + ':' + operand->shape().ToString(false) + ':';
    expression += operand->Is(HloOpcode::kBroadcast) ? operand->operand(0)->payload() : operand->payload();
  }
  return "folded_" + std::to_string(std::hash<std::string>()(expression));
}

}  // namespace

bool ConstantFolding::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    bool folded = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      // A folded result would still be copied into the result's buffer.
      if (!Foldable(*instruction) || instruction == computation->root()) continue;
      auto literal = std::make_unique<HloInstruction>(instruction->name() + ".folded", HloOpcode::kConstant,
                                                      instruction->shape());
      literal->set_payload(FoldedText(*instruction));
      instruction->ReplaceAllUsesWith(computation->AddInstruction(std::move(literal)));
      folded = true;
    }
    if (folded) RemoveDeadInstructions(computation.get());
    changed = changed || folded;
  }
  return changed;
}

}  // namespace exla
