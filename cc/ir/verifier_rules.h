// The verifier's knowledge of opcodes and shapes: which rule applies to each
// opcode, its operand count and attribute names (tables: the rules
// themselves, in verifier_checks.h, name opcodes only where one rule covers
// several), and the shape comparisons the rules share. Internal to the
// verifier.
#ifndef EXLA_IR_VERIFIER_RULES_H_
#define EXLA_IR_VERIFIER_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
  kBatchNorm,  // batch-norm-training, -inference and -grad
  kTuple,
  kGetTupleElement,
  kWhile,
  kCall,
  kParameter,
  kConstant,
};

Rule RuleFor(HloOpcode opcode);

// How many operands XLA's parser takes for an opcode: between `min` and `max`
// (-1: no limit), and an even (`pairs`: inputs and their initial values) or
// odd (`odd`: inputs, indices, updates) number where set.
struct Arity {
  int min;
  int max;
  bool pairs = false;
  bool odd = false;
};

// The operand count of opcodes whose count XLA's parser fixes; nothing for
// opcodes with a variable count (tuple, custom-call, collectives, ...),
// opcodes exla carries without knowing them, conditional (its count depends
// on its branches) and parameter and constant (no operands in the text).
std::optional<Arity> ArityFor(HloOpcode opcode);

// Whether XLA's parser accepts attribute `key` on an instruction of
// `opcode`, for the opcodes whose rule is known (RuleFor is not kUnknown):
// the attributes every instruction may carry (metadata, sharding,
// backend_config, ...) and the opcode's own. Other opcodes are carried
// verbatim, attributes included: always true.
bool AttributeAllowed(HloOpcode opcode, std::string_view key);

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
