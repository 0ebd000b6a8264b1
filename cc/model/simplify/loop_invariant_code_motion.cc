#include "model/simplify/loop_invariant_code_motion.h"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/loop_trips.h"
#include "ir/computation.h"
#include "model/simplify/call_inliner.h"
#include "pass/dce.h"

namespace exla {
namespace {

// XLA's NotWorthHoistingIndividually with the CPU pipeline's defaults
// (constants and reshapes not hoisted alone): hoisted only when an
// instruction that reads them is.
bool NotWorthHoistingAlone(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
    case HloOpcode::kTuple:
      return true;
    default:
      return false;
  }
}

// The loops the model rewrites: XLA's (a tuple state, more than one trip,
// no domain in the body) narrowed to those it can widen in place.
bool Eligible(const HloInstruction& loop) {
  const HloComputation* body = loop.CalledComputation("body");
  const HloComputation* cond = loop.CalledComputation("condition");
  if (!loop.shape().IsTuple() || body == nullptr || cond == nullptr || body->parameters().size() != 1 ||
      cond->parameters().size() != 1 || !body->root()->Is(HloOpcode::kTuple)) {
    return false;
  }
  // ComputeWhileLoopTripCountUpperBound: a loop of at most one trip stays.
  const int64_t trips = TripCount(loop);
  if (trips >= 0 && trips <= 1) return false;
  const HloInstruction* init = loop.operand(0);
  if (!init->Is(HloOpcode::kTuple) || init->user_count() != 1 || loop.parent()->root() == &loop) return false;
  for (const HloInstruction* user : loop.users()) {
    if (!user->Is(HloOpcode::kGetTupleElement)) return false;
  }
  for (const auto& instruction : body->instructions()) {
    if (instruction->Is(HloOpcode::kDomain)) return false;
  }
  const HloModule& module = *loop.parent()->parent();
  return module.CallerCount(body) == 1 && module.CallerCount(cond) == 1;
}

// What XLA hoists out of one body: the instructions to copy before the
// loop (operands first) and those whose values join the loop's state.
struct Hoisting {
  std::vector<HloInstruction*> copied;
  std::vector<HloInstruction*> replaced;
};

class InvariantFinder {
 public:
  explicit InvariantFinder(const HloComputation& body) : body_(body) {}

  Hoisting Run() {
    // WhileUtil::GetInvariantGTEsForWhileBody: the reads of an element the
    // root returns at the same index.
    const HloInstruction* state = body_.parameters()[0];
    const HloInstruction* root = body_.root();
    for (int i = 0; i < root->operand_count(); ++i) {
      const HloInstruction* read = root->operand(i);
      if (read->Is(HloOpcode::kGetTupleElement) && read->operand(0) == state &&
          read->IntAttribute("index").value_or(-1) == i && read->shape().IsArray()) {
        invariant_.insert(read);
      }
    }
    if (invariant_.empty()) return {};
    for (HloInstruction* instruction : body_.MakeInstructionPostOrder()) Visit(instruction);
    return std::move(hoisting_);
  }

 private:
  bool Invariant(const HloInstruction* operand) const {
    return operand->Is(HloOpcode::kConstant) || hoisted_.count(operand) || invariant_.count(operand);
  }

  void Visit(HloInstruction* instruction) {
    if (instruction->Is(HloOpcode::kParameter) || instruction->Is(HloOpcode::kAfterAll) ||
        HasSideEffect(*instruction) || !instruction->control_predecessors().empty() ||
        !instruction->control_successors().empty()) {
      return;
    }
    for (const HloInstruction* operand : instruction->operands()) {
      if (!Invariant(operand)) return;
    }
    if (NotWorthHoistingAlone(*instruction)) {
      if (!instruction->Is(HloOpcode::kConstant)) invariant_.insert(instruction);
      return;
    }
    if (HloInstruction* sunk = SinkScalarBroadcasts(instruction)) {
      Visit(sunk->operand(0));
      Visit(sunk);
      return;
    }
    Copy(instruction);
    hoisting_.replaced.push_back(instruction);
  }

  // XLA's algebraic simplifier, which runs before, has already rewritten an
  // elementwise instruction over broadcasts of scalars as the broadcast of
  // the instruction on the scalars
  // (TryToSinkBroadcastAfterOpWithUniqueNonScalarOperand): what is hoisted
  // and carried through the loop is then a scalar, not the array. Returns
  // the new broadcast, or nullptr where the rewrite does not apply.
  HloInstruction* SinkScalarBroadcasts(HloInstruction* instruction) {
    if (!instruction->IsElementwise() || !instruction->shape().IsArray()) return nullptr;
    std::vector<HloInstruction*> scalars;
    for (HloInstruction* operand : instruction->operands()) {
      if (!operand->Is(HloOpcode::kBroadcast) || operand->operand(0)->shape().rank() != 0 ||
          !operand->operand(0)->shape().IsArray()) {
        return nullptr;
      }
      scalars.push_back(operand->operand(0));
    }
    Shape scalar = scalars[0]->shape();
    scalar.set_element_type(instruction->shape().element_type());
    HloComputation* body = instruction->parent();
    HloInstruction* small = CopyInstruction(*instruction, scalars, body);
    *small->mutable_shape() = scalar;
    HloInstruction* broadcast = body->Add(HloOpcode::kBroadcast, instruction->shape(), {small});
    broadcast->SetIntListAttribute("dimensions", {});
    instruction->ReplaceAllUsesWith(broadcast);
    return broadcast;
  }

  // WhileUtil::CreateLoopInvariantCopy: the instruction and the invariant
  // operands not copied yet; reads of the state become reads of its input.
  void Copy(HloInstruction* instruction) {
    if (hoisted_.count(instruction)) return;
    if (instruction->Is(HloOpcode::kGetTupleElement) && instruction->operand(0)->Is(HloOpcode::kParameter)) {
      hoisted_.insert(instruction);
      return;
    }
    for (HloInstruction* operand : instruction->operands()) Copy(operand);
    hoisted_.insert(instruction);
    invariant_.erase(instruction);
    hoisting_.copied.push_back(instruction);
  }

  const HloComputation& body_;
  std::unordered_set<const HloInstruction*> invariant_;
  std::unordered_set<const HloInstruction*> hoisted_;
  Hoisting hoisting_;
};

// Copies the hoisted work before `loop`, reading the loop's input.
std::unordered_map<const HloInstruction*, HloInstruction*> CopyBefore(HloInstruction* loop,
                                                                      const Hoisting& hoisting) {
  HloInstruction* init = loop->operand(0);
  std::unordered_map<const HloInstruction*, HloInstruction*> copy_of;
  auto mapped = [&](HloInstruction* operand) {
    if (operand->Is(HloOpcode::kGetTupleElement) && operand->operand(0)->Is(HloOpcode::kParameter)) {
      return init->operand(static_cast<int>(operand->IntAttribute("index").value_or(0)));
    }
    return copy_of.at(operand);
  };
  for (HloInstruction* instruction : hoisting.copied) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : instruction->operands()) operands.push_back(mapped(operand));
    copy_of[instruction] = CopyInstruction(*instruction, operands, loop->parent());
  }
  return copy_of;
}

// WhileUtil::MakeInstructionsLiveIn: each hoisted value becomes a new
// element of the state, which the body reads instead of computing it.
void Widen(HloInstruction* loop, const Hoisting& hoisting,
           const std::unordered_map<const HloInstruction*, HloInstruction*>& copy_of) {
  HloInstruction* init = loop->operand(0);
  HloComputation* body = loop->CalledComputation("body");
  HloComputation* cond = loop->CalledComputation("condition");
  HloInstruction* state = body->parameters()[0];
  for (HloInstruction* instruction : hoisting.replaced) {
    const int64_t index = init->operand_count();
    init->AppendOperand(copy_of.at(instruction));
    HloInstruction* read = body->Add(HloOpcode::kGetTupleElement, instruction->shape(), {state});
    read->SetIntAttribute("index", index);
    instruction->ReplaceAllUsesWith(read);
    body->root()->AppendOperand(read);
  }
  std::vector<Shape> elements;
  for (const HloInstruction* operand : init->operands()) elements.push_back(operand->shape());
  const Shape widened = Shape::Tuple(elements);
  for (HloInstruction* instruction : {init, loop, state, body->root(), cond->parameters()[0]}) {
    *instruction->mutable_shape() = widened;
  }
  RemoveDeadInstructions(body);
}

}  // namespace

bool LoopInvariantCodeMotion::Run(HloModule* module) {
  std::vector<HloInstruction*> loops;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kWhile)) loops.push_back(instruction.get());
    }
  }
  bool changed = false;
  for (HloInstruction* loop : loops) {
    if (!Eligible(*loop)) continue;
    const Hoisting hoisting = InvariantFinder(*loop->CalledComputation("body")).Run();
    if (hoisting.replaced.empty()) continue;
    Widen(loop, hoisting, CopyBefore(loop, hoisting));
    changed = true;
  }
  return changed;
}

}  // namespace exla
