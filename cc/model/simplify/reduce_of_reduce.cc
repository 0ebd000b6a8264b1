#include "model/simplify/reduce_of_reduce.h"

#include <algorithm>
#include <vector>

#include "ir/computation.h"
#include "model/simplify/identity_converts.h"
#include "pass/dce.h"

namespace exla {
namespace {

bool IsSingleReduce(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kReduce) && instruction.operand_count() == 2 &&
         instruction.shape().IsArray();
}

// Both initial values the same scalar constant.
bool SameInitialValue(HloInstruction* a, HloInstruction* b) {
  a = WithoutIdentityConverts(a);
  b = WithoutIdentityConverts(b);
  if (a == b) return true;
  return a->Is(HloOpcode::kConstant) && b->Is(HloOpcode::kConstant) && a->shape() == b->shape() &&
         a->payload() == b->payload();
}

// The opcode of a combiner that applies one commutative binary op to its
// two parameters; kOther otherwise.
HloOpcode CommutativeCombiner(const HloComputation& combiner) {
  const HloInstruction* root = combiner.root();
  if (root == nullptr || root->operand_count() != 2) return HloOpcode::kOther;
  const HloOpcode op = root->opcode();
  if (op != HloOpcode::kAdd && op != HloOpcode::kMultiply && op != HloOpcode::kAnd &&
      op != HloOpcode::kOr) {
    return HloOpcode::kOther;
  }
  const HloInstruction* x = root->operand(0);
  const HloInstruction* y = root->operand(1);
  if (!x->Is(HloOpcode::kParameter) || !y->Is(HloOpcode::kParameter)) return HloOpcode::kOther;
  const int64_t a = x->parameter_number();
  const int64_t b = y->parameter_number();
  return (a == 0 && b == 1) || (a == 1 && b == 0) ? op : HloOpcode::kOther;
}

bool EquivalentCombiners(const HloComputation* a, const HloComputation* b) {
  if (a == nullptr || b == nullptr) return false;
  if (a == b) return true;
  const HloOpcode op = CommutativeCombiner(*a);
  return op != HloOpcode::kOther && op == CommutativeCombiner(*b);
}

// The dimensions of the inner reduce's input that `outer` and `inner`
// together fold: the outer's dimensions counted in the inner's input.
std::vector<int64_t> MergedDimensions(const HloInstruction& outer, const HloInstruction& inner) {
  std::vector<int64_t> folded = inner.dimensions();
  std::sort(folded.begin(), folded.end());
  std::vector<int64_t> outer_dims = outer.dimensions();
  std::sort(outer_dims.begin(), outer_dims.end());
  for (int64_t f : folded) {
    for (int64_t& d : outer_dims) {
      if (d >= f) ++d;
    }
  }
  folded.insert(folded.end(), outer_dims.begin(), outer_dims.end());
  std::sort(folded.begin(), folded.end());
  return folded;
}

// Folds `outer`'s reduce input into it. Returns whether it did.
bool MergeIntoOuter(HloInstruction* outer) {
  if (!IsSingleReduce(*outer)) return false;
  HloInstruction* inner = WithoutIdentityConverts(outer->operand(0));
  if (!IsSingleReduce(*inner) || inner->shape().element_type() != outer->shape().element_type()) {
    return false;
  }
  if (!SameInitialValue(outer->operand(1), inner->operand(1)) ||
      !EquivalentCombiners(outer->CalledComputation("to_apply"), inner->CalledComputation("to_apply"))) {
    return false;
  }
  const std::vector<int64_t> dimensions = MergedDimensions(*outer, *inner);
  outer->ReplaceOperand(0, inner->operand(0));
  outer->SetIntListAttribute("dimensions", dimensions);
  return true;
}

}  // namespace

bool ReduceOfReduce::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    // Operands first, so that a chain of reduces folds into its last one.
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      changed = MergeIntoOuter(instruction) || changed;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
