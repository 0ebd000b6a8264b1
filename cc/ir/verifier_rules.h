// The verifier's knowledge of opcodes and shapes: which shape rule applies to
// each opcode (the only place in the verifier that names opcodes) and the
// shape comparisons the rules share. Internal to cc/ir/verifier.cc.
#ifndef EXLA_IR_VERIFIER_RULES_H_
#define EXLA_IR_VERIFIER_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/opcode.h"
#include "ir/shape.h"

namespace exla {
namespace verifier_internal {

// What the verifier knows about an opcode. Everything opcode-specific goes
// through RuleFor(), the only place that names opcodes.
enum class Rule {
  kUnknown,  // carried verbatim: generic checks only
  kUnary,
  kUnaryToPred,
  kBinary,
  kCompare,
  kSelect,
  kClamp,
  kConvert,
  kBroadcast,
  kReshape,
  kTranspose,
  kReverse,
  kSlice,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kConcatenate,
  kIota,
  kDot,
  kReduce,
  kSort,
  kTuple,
  kGetTupleElement,
  kWhile,
  kCall,
  kParameter,
  kConstant,
};

Rule RuleFor(HloOpcode opcode);

// Same kind, element types and dimensions at every level; layouts ignored.
bool SameShape(const Shape& a, const Shape& b);

bool HasDynamicDimension(const Shape& shape);

// Bytes of `shape` (of all its elements for a tuple), or nothing when that
// number does not fit int64: Shape::ByteSize would overflow, and XLA itself
// refuses such a shape.
std::optional<int64_t> CheckedByteSize(const Shape& shape);

// "{1,2,3}".
std::string Join(const std::vector<int64_t>& values);

}  // namespace verifier_internal
}  // namespace exla

#endif  // EXLA_IR_VERIFIER_RULES_H_
