#include "ir/verifier_rules.h"

#include <cctype>

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
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return Rule::kBatchNorm;
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

std::optional<Arity> ArityFor(HloOpcode opcode) {
  switch (RuleFor(opcode)) {
    case Rule::kUnary:
    case Rule::kUnaryToPred:
    case Rule::kConvert:
    case Rule::kBroadcast:
    case Rule::kReshape:
    case Rule::kTranspose:
    case Rule::kReverse:
    case Rule::kSlice:
    case Rule::kGetTupleElement:
    case Rule::kWhile:
      return Arity{1, 1};
    case Rule::kBinary:
    case Rule::kCompare:
    case Rule::kDot:
      return Arity{2, 2};
    case Rule::kSelect:
    case Rule::kClamp:
      return Arity{3, 3};
    case Rule::kIota:
      return Arity{0, 0};
    case Rule::kDynamicSlice:
      return Arity{2, -1};
    case Rule::kDynamicUpdateSlice:
      return Arity{3, -1};
    case Rule::kConcatenate:
    case Rule::kSort:
      return Arity{1, -1};
    case Rule::kReduce:
      return Arity{2, -1, /*pairs=*/true};
    case Rule::kTuple:
    case Rule::kCall:
    case Rule::kParameter:
    case Rule::kConstant:
      return std::nullopt;
    case Rule::kBatchNorm:
    case Rule::kUnknown:
      break;
  }
  switch (opcode) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kFft:
    case HloOpcode::kCholesky:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kTopK:
      return Arity{1, 1};
    case HloOpcode::kComplex:
    case HloOpcode::kPad:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kConvolution:
    case HloOpcode::kGather:
    case HloOpcode::kRng:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kStochasticConvert:
    case HloOpcode::kAddDependency:
      return Arity{2, 2};
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kBatchNormTraining:
      return Arity{3, 3};
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return Arity{5, 5};
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      return Arity{0, 0};
    case HloOpcode::kReduceWindow:
      return Arity{2, -1, /*pairs=*/true};
    case HloOpcode::kScatter:
      return Arity{3, -1, /*pairs=*/false, /*odd=*/true};
    default:
      return std::nullopt;
  }
}

namespace {

bool HasResultAccuracy(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kSqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kTanh:
    case HloOpcode::kErf:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
      return true;
    default:
      return false;
  }
}

bool In(std::string_view key, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace

bool AttributeAllowed(HloOpcode opcode, std::string_view key) {
  // Every instruction may carry these (XLA's ParseInstructionRhs). The lists
  // here are those jaxlib 0.7.1's parser prints as "Allowed attributes".
  if (In(key, {"sharding", "frontend_attributes", "statistics", "parameter_replication",
               "control-predecessors", "origin", "metadata", "backend_config"})) {
    return true;
  }
  switch (RuleFor(opcode)) {
    case Rule::kUnknown:
      return true;  // carried verbatim
    case Rule::kUnary:
    case Rule::kUnaryToPred:
      return key == "result_accuracy" && HasResultAccuracy(opcode);
    case Rule::kBinary:
    case Rule::kSelect:
    case Rule::kClamp:
    case Rule::kConvert:
    case Rule::kDynamicUpdateSlice:
    case Rule::kTuple:
    case Rule::kParameter:
    case Rule::kConstant:
      return false;
    case Rule::kCompare:
      return In(key, {"direction", "type"});
    case Rule::kBroadcast:
    case Rule::kTranspose:
    case Rule::kReverse:
    case Rule::kConcatenate:
      return key == "dimensions";
    case Rule::kReshape:
      return key == "inferred_dimension";
    case Rule::kSlice:
      return key == "slice";
    case Rule::kDynamicSlice:
      return key == "dynamic_slice_sizes";
    case Rule::kIota:
      return key == "iota_dimension";
    case Rule::kDot:
      return In(key, {"lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims",
                      "rhs_contracting_dims", "operand_precision", "algorithm"});
    case Rule::kReduce:
      return In(key, {"dimensions", "to_apply"});
    case Rule::kSort:
      return In(key, {"dimensions", "to_apply", "is_stable"});
    case Rule::kGetTupleElement:
      return key == "index";
    case Rule::kWhile:
      return In(key, {"condition", "body"});
    case Rule::kCall:
      return In(key, {"to_apply", "is_composite"});
    case Rule::kBatchNorm:
      return In(key, {"epsilon", "feature_index"});
  }
  return true;
}

namespace {

bool IsNumberWord(std::string_view w) {
  if (w == "..." || w == "true" || w == "false") return true;
  size_t i = 0;
  if (i < w.size() && (w[i] == '+' || w[i] == '-')) ++i;
  std::string_view body = w.substr(i);
  if (body == "inf" || body == "nan") return true;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    for (char c : body.substr(2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  }
  size_t digits = 0, j = 0;
  while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j]))) ++j, ++digits;
  if (j < body.size() && body[j] == '.') {
    ++j;
    while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j]))) ++j, ++digits;
  }
  if (digits == 0) return false;
  if (j < body.size() && (body[j] == 'e' || body[j] == 'E')) {
    ++j;
    if (j < body.size() && (body[j] == '+' || body[j] == '-')) ++j;
    size_t exponent = 0;
    while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j]))) ++j, ++exponent;
    if (exponent == 0) return false;
  }
  return j == body.size();
}

}  // namespace

std::optional<std::string> LiteralTokenError(std::string_view literal, PrimitiveType type) {
  (void)type;  // every element type reads numbers; pred also true/false
  size_t i = 0;
  while (i < literal.size()) {
    char c = literal[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '{' || c == '}' || c == ',' ||
        c == '(' || c == ')') {
      ++i;
      continue;
    }
    if (literal.substr(i, 2) == "/*") {  // XLA's index comments
      size_t end = literal.find("*/", i + 2);
      if (end == std::string_view::npos) return std::nullopt;  // LiteralNestingError's to report
      i = end + 2;
      continue;
    }
    size_t start = i;
    while (i < literal.size() && !std::isspace(static_cast<unsigned char>(literal[i])) &&
           std::string_view("{},()").find(literal[i]) == std::string_view::npos &&
           literal.substr(i, 2) != "/*") {
      ++i;
    }
    std::string_view word = literal.substr(start, i - start);
    if (!IsNumberWord(word)) return "'" + std::string(word) + "', which is not a value";
  }
  return std::nullopt;
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
