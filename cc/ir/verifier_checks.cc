#include "ir/verifier_checks.h"

#include <unordered_set>
#include <utility>

namespace exla {
namespace verifier_internal {

bool InstructionCheck::ExpectOperands(int count) const {
  if (operand_count() == count) return true;
  Error(op() + " takes " + std::to_string(count) + " operand(s), has " +
        std::to_string(operand_count()));
  return false;
}

bool InstructionCheck::ExpectArrays() const {
  if (!shape().IsArray()) {
    Error(op() + " must have an array shape, has " + shape().ToString());
    return false;
  }
  for (const HloInstruction* operand : instruction_.operands()) {
    if (!operand->shape().IsArray()) {
      Error(op() + " operand '" + operand->name() + "' must be an array, is " +
            operand->shape().ToString());
      return false;
    }
  }
  return true;
}

void InstructionCheck::ExpectShape(const Shape& inferred) const {
  if (!SameShape(shape(), inferred)) {
    Error(op() + " has shape " + shape().ToString(false) + " but its operands give " +
          inferred.ToString(false));
  }
}

bool InstructionCheck::ExpectDimensions(const std::string& what, const std::vector<int64_t>& dims,
                                        int rank) const {
  std::unordered_set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      Error(what + "=" + Join(dims) + " out of range for rank " + std::to_string(rank));
      return false;
    }
    if (!seen.insert(d).second) {
      Error(what + "=" + Join(dims) + " repeats dimension " + std::to_string(d));
      return false;
    }
  }
  return true;
}

bool InstructionCheck::ExpectStartIndices(int first, const Shape& operand) const {
  const int count = operand_count() - first;
  auto integral = [](const Shape& s) { return IsIntegralType(s.element_type()); };
  if (count == 1 && operand_shape(first).rank() == 1) {
    const Shape& index = operand_shape(first);
    if (!integral(index) || index.dim(0) != operand.rank()) {
      Error(op() + " start index vector " + index.ToString(false) + " must hold " +
            std::to_string(operand.rank()) + " integer(s)");
      return false;
    }
    return true;
  }
  if (count != operand.rank()) {
    Error(op() + " takes " + std::to_string(operand.rank()) + " start index operand(s) for " +
          operand.ToString(false) + ", has " + std::to_string(count));
    return false;
  }
  for (int i = first; i < operand_count(); ++i) {
    const Shape& index = operand_shape(i);
    if (index.rank() != 0 || !integral(index)) {
      Error(op() + " start index '" + instruction_.operand(i)->name() + "' must be an integer " +
            "scalar, is " + index.ToString(false));
      return false;
    }
  }
  return true;
}

const HloComputation* InstructionCheck::Callee(const char* key) const {
  const HloComputation* callee = instruction_.CalledComputation(key);
  if (callee == nullptr) Error(op() + " needs a '" + key + "' computation");
  return callee;
}

ShapeRule ShapeRuleFor(Rule rule) {
  static constexpr std::pair<Rule, ShapeRule> kTable[] = {
      {Rule::kUnary, CheckUnary},
      {Rule::kUnaryToPred, CheckUnaryToPred},
      {Rule::kConvert, CheckConvert},
      {Rule::kBinary, CheckBinary},
      {Rule::kCompare, CheckCompare},
      {Rule::kSelect, CheckSelect},
      {Rule::kClamp, CheckClamp},
      {Rule::kBroadcast, CheckBroadcast},
      {Rule::kReshape, CheckReshape},
      {Rule::kTranspose, CheckTranspose},
      {Rule::kReverse, CheckReverse},
      {Rule::kSlice, CheckSlice},
      {Rule::kDynamicSlice, CheckDynamicSlice},
      {Rule::kDynamicUpdateSlice, CheckDynamicUpdateSlice},
      {Rule::kConcatenate, CheckConcatenate},
      {Rule::kIota, CheckIota},
      {Rule::kDot, CheckDot},
      {Rule::kReduce, CheckReduce},
      {Rule::kSort, CheckSort},
      {Rule::kBatchNorm, CheckBatchNorm},
      {Rule::kTuple, CheckTuple},
      {Rule::kGetTupleElement, CheckGetTupleElement},
      {Rule::kWhile, CheckWhile},
      {Rule::kCall, CheckCall},
      {Rule::kParameter, CheckParameter},
      {Rule::kConstant, CheckConstant},
  };
  for (const auto& [known, check] : kTable) {
    if (known == rule) return check;
  }
  return nullptr;  // Rule::kUnknown
}

}  // namespace verifier_internal
}  // namespace exla
