#include "model/simplify/conditional_to_select.h"

#include <vector>

#include "ir/computation.h"
#include "ir/control_flow.h"
#include "model/simplify/call_inliner.h"

namespace exla {
namespace {

// Whether XLA's conditional simplifier counts `branch` cheap enough to run
// whether or not it is taken: nothing but elementwise arithmetic, literals
// and the cheap moves of data (broadcasts, slices, reshapes, pads,
// concatenations, reductions, tuples).
bool CheapBranch(const HloComputation& branch) {
  for (const auto& instruction : branch.instructions()) {
    if (instruction->HasSideEffectNoRecurse()) return false;
    if (instruction->IsElementwise()) continue;
    switch (instruction->opcode()) {
      case HloOpcode::kBroadcast:
      case HloOpcode::kConcatenate:
      case HloOpcode::kConstant:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kReduce:
      case HloOpcode::kReshape:
      case HloOpcode::kPad:
      case HloOpcode::kParameter:
      case HloOpcode::kSlice:
      case HloOpcode::kTuple:
        break;
      default:
        return false;
    }
  }
  return true;
}

// Whether XLA replaces `conditional` by both its branches and a select: two
// branches chosen by a boolean, both cheap.
bool BecomesSelect(const HloInstruction& conditional) {
  const std::vector<HloComputation*> branches = conditional.called_computations();
  if (branches.size() != 2 || conditional.operand_count() != 3) return false;
  const Shape& predicate = conditional.operand(0)->shape();
  if (!predicate.IsArray() || predicate.rank() != 0 || predicate.element_type() != PrimitiveType::kPred) {
    return false;
  }
  return branches[0] != nullptr && branches[1] != nullptr && CheapBranch(*branches[0]) && CheapBranch(*branches[1]);
}

// Element `index` of the tuple `tuple`: the operand of a tuple instruction
// (XLA's simplifier folds an element read of a tuple it built), else a read.
HloInstruction* Element(HloInstruction* tuple, int64_t index, HloComputation* computation) {
  if (tuple->Is(HloOpcode::kTuple)) return tuple->operand(static_cast<int>(index));
  HloInstruction* element =
      computation->Add(HloOpcode::kGetTupleElement, tuple->shape().tuple_shape(static_cast<int>(index)), {tuple});
  element->SetIntAttribute("index", index);
  return element;
}

// Removes what the lowering left unread (the branches' result tables).
void RemoveDead(HloComputation* computation) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<HloInstruction*> dead;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->users().empty() && instruction.get() != computation->root() &&
          !instruction->Is(HloOpcode::kParameter) && !instruction->HasSideEffectNoRecurse() &&
          instruction->control_successors().empty()) {
        dead.push_back(instruction.get());
      }
    }
    for (HloInstruction* instruction : dead) computation->RemoveInstruction(instruction);
    changed = !dead.empty();
  }
}

// Selects between `on_true` and `on_false` (of `shape`) element by element,
// tuple element by tuple element.
HloInstruction* SelectLeaves(HloInstruction* predicate, HloInstruction* on_true, HloInstruction* on_false,
                             const Shape& shape, HloComputation* computation) {
  if (shape.IsTuple()) {
    std::vector<HloInstruction*> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      const Shape& element = shape.tuple_shape(static_cast<int>(i));
      HloInstruction* t = Element(on_true, static_cast<int64_t>(i), computation);
      HloInstruction* f = Element(on_false, static_cast<int64_t>(i), computation);
      elements.push_back(SelectLeaves(predicate, t, f, element, computation));
    }
    return computation->Add(HloOpcode::kTuple, shape, elements);
  }
  if (!shape.IsArray()) return on_true;
  HloInstruction* mask = predicate;
  if (shape.rank() > 0) {
    mask = computation->Add(HloOpcode::kBroadcast, Shape::Array(PrimitiveType::kPred, shape.dims()), {predicate});
    mask->SetIntListAttribute("dimensions", {});
  }
  return computation->Add(HloOpcode::kSelect, shape, {mask, on_true, on_false});
}

// Replaces the conditional by copies of both branches and a select; returns
// whether it did. The calls among the copies stay calls: the call inliner
// has run.
bool LowerToSelect(HloInstruction* conditional) {
  const std::vector<HloComputation*> branches = conditional->called_computations();
  HloComputation* computation = conditional->parent();
  std::vector<HloInstruction*> calls;
  HloInstruction* on_true = InlineComputation(*branches[0], {conditional->operand(1)}, computation, &calls);
  HloInstruction* on_false = InlineComputation(*branches[1], {conditional->operand(2)}, computation, &calls);
  if (on_true == nullptr || on_false == nullptr) return false;
  ReplaceAndRemove(conditional,
                   SelectLeaves(conditional->operand(0), on_true, on_false, conditional->shape(), computation));
  RemoveDead(computation);
  return true;
}

}  // namespace

bool ConditionalToSelect::Run(HloModule* module) {
  std::vector<HloInstruction*> conditionals;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kConditional) && BecomesSelect(*instruction)) {
        conditionals.push_back(instruction.get());
      }
    }
  }
  bool changed = false;
  for (HloInstruction* conditional : conditionals) changed = LowerToSelect(conditional) || changed;
  return changed;
}

}  // namespace exla
