#include "model/fusion/output_fusion.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "ir/pattern_matcher.h"
#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// Instructions XLA's simplifier and layout assignment leave as no work: a
// reshape (a bitcast on row-major arrays), a copy exla's bridge removes,
// a transpose or conversion that moves no element.
bool IsNoWork(const HloInstruction& instruction) {
  if (instruction.operand_count() != 1 || !instruction.shape().IsArray()) return false;
  switch (instruction.opcode()) {
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
      return true;
    case HloOpcode::kTranspose:
    case HloOpcode::kConvert:
      return m::MovesNoElement(&instruction);
    default:
      return false;
  }
}

const HloInstruction& BelowViews(const HloInstruction& value) {
  const HloInstruction* at = &value;
  while (IsNoWork(*at)) at = at->operand(0);
  return *at;
}

// IsNonComplexNonBatchedMatrixVectorDot in cpu_instruction_fusion.cc, on
// the dot's dimensions without those of extent 1.
bool IsMatrixVectorProduct(const HloInstruction& dot) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2 || !dot.shape().IsArray()) return false;
  if (IsComplexType(dot.shape().element_type()) || !dot.dot_dimensions().lhs_batch.empty()) return false;
  const std::vector<int64_t>& dims = dot.shape().dims();
  return std::count_if(dims.begin(), dims.end(), [](int64_t d) { return d != 1; }) <= 1;
}

// The dimensions of `shape` without those of extent 1.
std::vector<int64_t> WithoutUnitDims(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d : shape.dims()) {
    if (d != 1) dims.push_back(d);
  }
  return dims;
}

bool HasUnitDims(const Shape& shape) { return WithoutUnitDims(shape).size() != shape.dims().size(); }

// XLA's simplifier drops a dot's dimensions of extent 1 and reshapes its
// result back: the add then reads a bitcast, not the dot, unless the
// reshape mover sinks that reshape below the add, which it does only when
// every operand of the add is such a reshape (reshape_mover.cc). Whether
// `operand` of the add is one: a matrix-vector product with dimensions of
// extent 1, or a reshape that adds them.
bool ReshapedToUnitDims(const HloInstruction& operand) {
  const HloInstruction& value = BelowViews(operand);
  if (IsMatrixVectorProduct(value)) return HasUnitDims(value.shape());
  for (const HloInstruction* at = &operand; at != &value; at = at->operand(0)) {
    if ((at->Is(HloOpcode::kReshape) || at->Is(HloOpcode::kBitcast)) && at->operand(0)->shape().IsArray() &&
        at->operand(0)->shape().dims() == WithoutUnitDims(at->shape())) {
      return true;
    }
  }
  return false;
}

// The add that is the only reader of `dot`, reading it once (through
// views), or null.
const HloInstruction* SoleAddReader(const HloInstruction& dot) {
  const HloInstruction* at = &dot;
  while (at->user_count() == 1) {
    const HloInstruction* user = at->users()[0];
    const std::vector<HloInstruction*>& operands = user->operands();
    if (std::count(operands.begin(), operands.end(), at) != 1) return nullptr;
    if (!IsNoWork(*user)) return user->Is(HloOpcode::kAdd) ? user : nullptr;
    at = user;
  }
  return nullptr;
}

// Whether CpuInstructionFusion fuses `producer` into an add as a loop
// (CanBeLoopFused; not a parameter, nor a literal alone).
bool LoopFusesIntoAdd(const HloInstruction& producer) {
  const HloInstruction& value = BelowViews(producer);
  if (value.Is(HloOpcode::kParameter) || value.Is(HloOpcode::kConstant)) return false;
  if (&value != &producer) return true;  // a reshape or bitcast of a value fuses
  return IsLoopFusible(value) && !value.Is(HloOpcode::kGetTupleElement);
}

}  // namespace

bool IsOutputFusedIntoAdd(const HloInstruction& dot) {
  if (!IsMatrixVectorProduct(dot)) return false;
  const HloInstruction* add = SoleAddReader(dot);
  if (add == nullptr || add->parent() == nullptr) return false;
  if (HasUnitDims(dot.shape())) {
    for (const HloInstruction* operand : add->operands()) {
      if (!ReshapedToUnitDims(*operand)) return false;
    }
  }
  std::unordered_map<const HloInstruction*, size_t> position;
  const std::vector<HloInstruction*> order = add->parent()->MakeInstructionPostOrder();
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::vector<const HloInstruction*> operands(add->operands().begin(), add->operands().end());
  std::stable_sort(operands.begin(), operands.end(), [&position](const HloInstruction* a, const HloInstruction* b) {
    return position[a] > position[b];
  });
  for (const HloInstruction* operand : operands) {
    if (&BelowViews(*operand) == &dot) return true;
    if (LoopFusesIntoAdd(*operand)) return false;
  }
  return false;
}

bool IsOutputFusedOperand(const HloInstruction& add, int operand_index) {
  if (!add.Is(HloOpcode::kAdd)) return false;
  const HloInstruction& value = BelowViews(*add.operand(operand_index));
  return value.Is(HloOpcode::kDot) && IsOutputFusedIntoAdd(value);
}

bool TakesOutputFusedDot(const HloInstruction& add) {
  for (int i = 0; i < add.operand_count(); ++i) {
    if (IsOutputFusedOperand(add, i)) return true;
  }
  return false;
}

}  // namespace exla
