#include "model/simplify/loop_constant_sinking.h"

#include <memory>
#include <vector>

#include "analysis/loop_state.h"
#include "ir/computation.h"

namespace exla {
namespace {

// The literal `value` is, through the views and conversions to its own type
// that XLA's simplifier removes; null when it is not one.
const HloInstruction* LiteralBehind(const HloInstruction* value) {
  while (true) {
    value = StripIdentity(value);
    if (!value->Is(HloOpcode::kConvert) || !(value->shape() == value->operand(0)->shape())) break;
    value = value->operand(0);
  }
  return value->Is(HloOpcode::kConstant) ? value : nullptr;
}

// Makes what `computation` reads of element `index` of its parameter read a
// copy of `literal`, but where its root returns that element in its own
// place (the body's pass-through, which stays). Returns whether any read
// changed.
bool SinkInto(HloComputation* computation, int64_t index, const HloInstruction& literal) {
  if (computation == nullptr || computation->parameters().size() != 1) return false;
  const HloInstruction* parameter = computation->parameters()[0];
  std::vector<HloInstruction*> reads;
  for (HloInstruction* user : parameter->users()) {
    if (user->Is(HloOpcode::kGetTupleElement) && user->IntAttribute("index") == index) reads.push_back(user);
  }
  HloInstruction* copy = nullptr;
  bool changed = false;
  for (HloInstruction* read : reads) {
    const std::vector<HloInstruction*> users = read->users();  // changes below
    for (HloInstruction* user : users) {
      if (user == computation->root()) continue;
      if (copy == nullptr) {
        auto made = std::make_unique<HloInstruction>(literal.name(), HloOpcode::kConstant, read->shape());
        made->set_payload(literal.payload());
        copy = computation->AddInstruction(std::move(made));
      }
      user->ReplaceOperandEverywhere(read, copy);
      changed = true;
    }
  }
  return changed;
}

bool SinkLiterals(const HloInstruction& loop) {
  if (!FlatArrayState(loop)) return false;
  HloComputation* body = loop.CalledComputation("body");
  if (body == nullptr) return false;
  const std::vector<bool> passes = PassThroughLeaves(*body);
  const HloInstruction& init = *loop.operand(0);
  bool changed = false;
  for (int k = 0; k < init.operand_count() && k < static_cast<int>(passes.size()); ++k) {
    const HloInstruction* literal = passes[k] ? LiteralBehind(init.operand(k)) : nullptr;
    if (literal == nullptr || !(literal->shape() == init.operand(k)->shape())) continue;
    changed = SinkInto(body, k, *literal) | changed;
    changed = SinkInto(loop.CalledComputation("condition"), k, *literal) | changed;
  }
  return changed;
}

}  // namespace

bool LoopConstantSinking::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kWhile)) any = SinkLiterals(*instruction) || any;
    }
  }
  return any;
}

}  // namespace exla
