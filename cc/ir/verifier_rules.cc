#include "ir/verifier_rules.h"

namespace exla {
namespace verifier_internal {

Rule RuleFor(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs:
    case HloOpcode::kNegate:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kTanh:
    case HloOpcode::kLogistic:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kSign:
    case HloOpcode::kNot:
    case HloOpcode::kCopy:
    case HloOpcode::kErf:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kClz:
      return Rule::kUnary;
    case HloOpcode::kIsFinite:
      return Rule::kUnaryToPred;
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kAtan2:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      return Rule::kBinary;
    case HloOpcode::kCompare:
      return Rule::kCompare;
    case HloOpcode::kSelect:
      return Rule::kSelect;
    case HloOpcode::kClamp:
      return Rule::kClamp;
    case HloOpcode::kConvert:
      return Rule::kConvert;
    case HloOpcode::kBroadcast:
      return Rule::kBroadcast;
    case HloOpcode::kReshape:
      return Rule::kReshape;
    case HloOpcode::kTranspose:
      return Rule::kTranspose;
    case HloOpcode::kReverse:
      return Rule::kReverse;
    case HloOpcode::kSlice:
      return Rule::kSlice;
    case HloOpcode::kDynamicSlice:
      return Rule::kDynamicSlice;
    case HloOpcode::kDynamicUpdateSlice:
      return Rule::kDynamicUpdateSlice;
    case HloOpcode::kConcatenate:
      return Rule::kConcatenate;
    case HloOpcode::kIota:
      return Rule::kIota;
    case HloOpcode::kDot:
      return Rule::kDot;
    case HloOpcode::kReduce:
      return Rule::kReduce;
    case HloOpcode::kSort:
      return Rule::kSort;
    case HloOpcode::kTuple:
      return Rule::kTuple;
    case HloOpcode::kGetTupleElement:
      return Rule::kGetTupleElement;
    case HloOpcode::kWhile:
      return Rule::kWhile;
    case HloOpcode::kCall:
      return Rule::kCall;
    case HloOpcode::kParameter:
      return Rule::kParameter;
    case HloOpcode::kConstant:
      return Rule::kConstant;
    default:
      return Rule::kUnknown;
  }
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.kind() != b.kind()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i) {
      if (!SameShape(a.tuple_shape(static_cast<int>(i)), b.tuple_shape(static_cast<int>(i)))) {
        return false;
      }
    }
    return true;
  }
  return !a.IsArray() || a.Compatible(b);
}

bool HasDynamicDimension(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HasDynamicDimension(element)) return true;
    }
    return false;
  }
  return shape.IsArray() && shape.IsDynamic();
}

std::optional<int64_t> CheckedByteSize(const Shape& shape) {
  int64_t total = 0;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      std::optional<int64_t> bytes = CheckedByteSize(element);
      if (!bytes.has_value() || __builtin_add_overflow(total, *bytes, &total)) return std::nullopt;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  total = (PrimitiveTypeBitWidth(shape.element_type()) + 7) / 8;
  for (int64_t d : shape.dims()) {
    if (d < 0 || __builtin_mul_overflow(total, d, &total)) return std::nullopt;
  }
  return total;
}

std::string Join(const std::vector<int64_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "}";
}

}  // namespace verifier_internal
}  // namespace exla
