#include "model/simplify/reduce_of_concatenate.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "model/simplify/identity_converts.h"
#include "pass/dce.h"

namespace exla {
namespace {

// The opcode of a reducer that applies one binary elementwise operation to
// its two parameters (what the map inliner turns into that operation);
// kOther otherwise.
HloOpcode BinaryReducer(const HloComputation* reducer) {
  if (reducer == nullptr || reducer->root() == nullptr) return HloOpcode::kOther;
  const HloInstruction* root = reducer->root();
  if (root->operand_count() != 2 || !root->IsElementwise()) return HloOpcode::kOther;
  if (!root->operand(0)->Is(HloOpcode::kParameter) || !root->operand(1)->Is(HloOpcode::kParameter) ||
      root->operand(0) == root->operand(1)) {
    return HloOpcode::kOther;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
      return root->opcode();
    default:
      return HloOpcode::kOther;
  }
}

bool FoldsConcatenatedDimension(const HloInstruction& reduce) {
  if (!reduce.Is(HloOpcode::kReduce) || reduce.operand_count() != 2 || !reduce.shape().IsArray()) return false;
  const HloInstruction* input = WithoutIdentityConverts(reduce.operand(0));
  if (!input->Is(HloOpcode::kConcatenate) || input->dimensions().size() != 1) return false;
  const std::vector<int64_t> folded = reduce.dimensions();
  return std::find(folded.begin(), folded.end(), input->dimensions()[0]) != folded.end();
}

// One reduce of `part` as `reduce` reduces the whole.
HloInstruction* ReduceOfPart(HloComputation* computation, const HloInstruction& reduce, HloInstruction* part,
                             int index) {
  auto partial = std::make_unique<HloInstruction>(reduce.name() + ".part" + std::to_string(index),
                                                  HloOpcode::kReduce, reduce.shape());
  partial->AppendOperand(part);
  partial->AppendOperand(reduce.operand(1));
  partial->SetIntListAttribute("dimensions", reduce.dimensions());
  partial->SetCalledComputation("to_apply", reduce.CalledComputation("to_apply"));
  return computation->AddInstruction(std::move(partial));
}

// Replaces `reduce` by the reduces of its input's parts, joined. Returns
// whether it did.
bool Split(HloComputation* computation, HloInstruction* reduce) {
  if (!FoldsConcatenatedDimension(*reduce)) return false;
  const HloOpcode join = BinaryReducer(reduce->CalledComputation("to_apply"));
  if (join == HloOpcode::kOther) return false;
  const std::vector<HloInstruction*> parts = WithoutIdentityConverts(reduce->operand(0))->operands();
  HloInstruction* whole = nullptr;
  for (size_t i = 0; i < parts.size(); ++i) {
    HloInstruction* partial = ReduceOfPart(computation, *reduce, parts[i], static_cast<int>(i));
    if (whole == nullptr) {
      whole = partial;
      continue;
    }
    auto joined = std::make_unique<HloInstruction>(reduce->name() + ".join" + std::to_string(i), join,
                                                   reduce->shape());
    joined->AppendOperand(whole);
    joined->AppendOperand(partial);
    whole = computation->AddInstruction(std::move(joined));
  }
  reduce->ReplaceAllUsesWith(whole);
  return true;
}

}  // namespace

bool ReduceOfConcatenate::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      changed = Split(computation.get(), instruction) || changed;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
