// The verifier's checks of one instruction, one function per verifier rule
// (as XLA's ShapeVerifier has one HandleX per opcode), dispatched from the
// rule table (ShapeRuleFor). The functions live with their kind:
// verifier_shapes.cc (array operations: elementwise, shape manipulation,
// slicing, dot), verifier_calls.cc (instructions that call computations or
// build tuples) and verifier_attributes.cc (rules about attributes and
// literals rather than operands). Internal to the verifier.
#ifndef EXLA_IR_VERIFIER_CHECKS_H_
#define EXLA_IR_VERIFIER_CHECKS_H_

#include <functional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/verifier_rules.h"

namespace exla {
namespace verifier_internal {

// One instruction under check, and where its violations go. The Expect*
// helpers report a violation and return false (or nothing) when their
// expectation fails, so that a rule stops before reading what is not there.
class InstructionCheck {
 public:
  InstructionCheck(const HloInstruction& instruction, std::function<void(std::string)> error)
      : instruction_(instruction), error_(std::move(error)) {}

  const HloInstruction& instruction() const { return instruction_; }
  const Shape& shape() const { return instruction_.shape(); }
  const Shape& operand_shape(int i) const { return instruction_.operand(i)->shape(); }
  int operand_count() const { return instruction_.operand_count(); }
  // The printed opcode name, for messages ("dynamic-slice").
  std::string op() const { return std::string(instruction_.opcode_name()); }

  void Error(std::string message) const { error_(std::move(message)); }

  // Exactly `count` operands.
  bool ExpectOperands(int count) const;
  // The result and every operand are arrays.
  bool ExpectArrays() const;
  // The printed shape is `inferred` (layouts ignored).
  void ExpectShape(const Shape& inferred) const;
  // Each of `dims` in [0, rank) and no repeats; `what` names the attribute.
  bool ExpectDimensions(const std::string& what, const std::vector<int64_t>& dims,
                        int rank) const;
  // The start indices of dynamic-slice and dynamic-update-slice, from operand
  // `first` on: one integer scalar per dimension of `operand`, or (XLA's
  // older form) a single integer vector of that length.
  bool ExpectStartIndices(int first, const Shape& operand) const;
  // A reduction computation for values of `types` (see verifier_calls.cc).
  void ExpectReducer(const HloComputation& reducer, const std::vector<PrimitiveType>& types) const;
  // The computation called as `key`, or null after reporting its absence.
  const HloComputation* Callee(const char* key) const;

 private:
  const HloInstruction& instruction_;
  std::function<void(std::string)> error_;
};

// The check of one rule: the shape against the one its operands and
// attributes give, and whatever else the rule knows.
using ShapeRule = void (*)(const InstructionCheck&);

// The check of `rule`; null for Rule::kUnknown (generic checks only).
ShapeRule ShapeRuleFor(Rule rule);

// Rules of verifier_shapes.cc.
void CheckUnary(const InstructionCheck& check);
void CheckUnaryToPred(const InstructionCheck& check);
void CheckConvert(const InstructionCheck& check);
void CheckBinary(const InstructionCheck& check);
void CheckCompare(const InstructionCheck& check);
void CheckSelect(const InstructionCheck& check);
void CheckClamp(const InstructionCheck& check);
void CheckBroadcast(const InstructionCheck& check);
void CheckReshape(const InstructionCheck& check);
void CheckTranspose(const InstructionCheck& check);
void CheckReverse(const InstructionCheck& check);
void CheckSlice(const InstructionCheck& check);
void CheckDynamicSlice(const InstructionCheck& check);
void CheckDynamicUpdateSlice(const InstructionCheck& check);
void CheckConcatenate(const InstructionCheck& check);
void CheckIota(const InstructionCheck& check);
void CheckDot(const InstructionCheck& check);

// Rules of verifier_calls.cc.
void CheckReduce(const InstructionCheck& check);
void CheckSort(const InstructionCheck& check);
void CheckTuple(const InstructionCheck& check);
void CheckGetTupleElement(const InstructionCheck& check);
void CheckWhile(const InstructionCheck& check);
void CheckCall(const InstructionCheck& check);

// Rules of verifier_attributes.cc.
void CheckParameter(const InstructionCheck& check);
void CheckConstant(const InstructionCheck& check);
void CheckBatchNorm(const InstructionCheck& check);

// Checks that run before the shape rules, for opcodes whose shape exla does
// not infer (verifier_attributes.cc). Each returns false after reporting a
// violation that must stop the instruction's other checks.
bool CheckTopK(const InstructionCheck& check);
// Scatter's and gather's dimension numbers name dimensions their operands
// have, each once, as XLA requires.
bool CheckDimensionNumbers(const InstructionCheck& check);
// get-dimension-size and set-dimension-size: one dimension of the operand.
bool CheckDimensionSizeOperand(const InstructionCheck& check);

}  // namespace verifier_internal
}  // namespace exla

#endif  // EXLA_IR_VERIFIER_CHECKS_H_
