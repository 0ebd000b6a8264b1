#include "ir/verifier_rules.h"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace exla {
namespace verifier_internal {

namespace {

// The opcodes of each rule; every other opcode is Rule::kUnknown.
struct RuleOpcodes {
  Rule rule;
  std::initializer_list<HloOpcode> opcodes;
};

const RuleOpcodes kRuleTable[] = {
    {Rule::kUnary,
     {HloOpcode::kAbs, HloOpcode::kNegate, HloOpcode::kExp, HloOpcode::kExpm1, HloOpcode::kLog,
      HloOpcode::kLog1p, HloOpcode::kSqrt, HloOpcode::kRsqrt, HloOpcode::kCbrt, HloOpcode::kTanh,
      HloOpcode::kLogistic, HloOpcode::kSin, HloOpcode::kCos, HloOpcode::kTan, HloOpcode::kFloor,
      HloOpcode::kCeil, HloOpcode::kRoundNearestAfz, HloOpcode::kRoundNearestEven,
      HloOpcode::kSign, HloOpcode::kNot, HloOpcode::kCopy, HloOpcode::kErf,
      HloOpcode::kPopulationCount, HloOpcode::kClz}},
    {Rule::kUnaryToPred, {HloOpcode::kIsFinite}},
    {Rule::kBinary,
     {HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kMultiply, HloOpcode::kDivide,
      HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kPower, HloOpcode::kRemainder,
      HloOpcode::kAtan2, HloOpcode::kAnd, HloOpcode::kOr, HloOpcode::kXor, HloOpcode::kShiftLeft,
      HloOpcode::kShiftRightArithmetic, HloOpcode::kShiftRightLogical}},
    {Rule::kCompare, {HloOpcode::kCompare}},
    {Rule::kSelect, {HloOpcode::kSelect}},
    {Rule::kClamp, {HloOpcode::kClamp}},
    {Rule::kConvert, {HloOpcode::kConvert}},
    {Rule::kBroadcast, {HloOpcode::kBroadcast}},
    {Rule::kReshape, {HloOpcode::kReshape}},
    {Rule::kTranspose, {HloOpcode::kTranspose}},
    {Rule::kReverse, {HloOpcode::kReverse}},
    {Rule::kSlice, {HloOpcode::kSlice}},
    {Rule::kDynamicSlice, {HloOpcode::kDynamicSlice}},
    {Rule::kDynamicUpdateSlice, {HloOpcode::kDynamicUpdateSlice}},
    {Rule::kConcatenate, {HloOpcode::kConcatenate}},
    {Rule::kIota, {HloOpcode::kIota}},
    {Rule::kDot, {HloOpcode::kDot}},
    {Rule::kReduce, {HloOpcode::kReduce}},
    {Rule::kSort, {HloOpcode::kSort}},
    {Rule::kBatchNorm,
     {HloOpcode::kBatchNormTraining, HloOpcode::kBatchNormInference, HloOpcode::kBatchNormGrad}},
    {Rule::kTuple, {HloOpcode::kTuple}},
    {Rule::kGetTupleElement, {HloOpcode::kGetTupleElement}},
    {Rule::kWhile, {HloOpcode::kWhile}},
    {Rule::kCall, {HloOpcode::kCall}},
    {Rule::kParameter, {HloOpcode::kParameter}},
    {Rule::kConstant, {HloOpcode::kConstant}},
};

constexpr size_t kOpcodeCount = static_cast<size_t>(HloOpcode::kOther) + 1;

// RuleFor's answer for every opcode, built once from kRuleTable.
std::array<Rule, kOpcodeCount> RulesByOpcode() {
  std::array<Rule, kOpcodeCount> rules;
  rules.fill(Rule::kUnknown);
  for (const RuleOpcodes& entry : kRuleTable) {
    for (HloOpcode opcode : entry.opcodes) rules[static_cast<size_t>(opcode)] = entry.rule;
  }
  return rules;
}

}  // namespace

Rule RuleFor(HloOpcode opcode) {
  static const std::array<Rule, kOpcodeCount> kRules = RulesByOpcode();
  return kRules[static_cast<size_t>(opcode)];
}

namespace {

// Operand counts by rule (every opcode of the rule has it) and, for opcodes
// whose rule is unknown or batch normalization, by opcode. Tuple, call,
// parameter and constant are in neither: their count is not fixed.
struct RuleArity {
  Arity arity;
  std::initializer_list<Rule> rules;
};

const RuleArity kRuleArities[] = {
    {Arity{1, 1},
     {Rule::kUnary, Rule::kUnaryToPred, Rule::kConvert, Rule::kBroadcast, Rule::kReshape,
      Rule::kTranspose, Rule::kReverse, Rule::kSlice, Rule::kGetTupleElement, Rule::kWhile}},
    {Arity{2, 2}, {Rule::kBinary, Rule::kCompare, Rule::kDot}},
    {Arity{3, 3}, {Rule::kSelect, Rule::kClamp}},
    {Arity{0, 0}, {Rule::kIota}},
    {Arity{2, -1}, {Rule::kDynamicSlice}},
    {Arity{3, -1}, {Rule::kDynamicUpdateSlice}},
    {Arity{1, -1}, {Rule::kConcatenate, Rule::kSort}},
    {Arity{2, -1, /*pairs=*/true}, {Rule::kReduce}},
};

struct OpcodeArity {
  Arity arity;
  std::initializer_list<HloOpcode> opcodes;
};

const OpcodeArity kOpcodeArities[] = {
    {Arity{1, 1},
     {HloOpcode::kReal, HloOpcode::kImag, HloOpcode::kBitcast, HloOpcode::kBitcastConvert,
      HloOpcode::kReducePrecision, HloOpcode::kFft, HloOpcode::kCholesky,
      HloOpcode::kRngBitGenerator, HloOpcode::kGetDimensionSize, HloOpcode::kOptimizationBarrier,
      HloOpcode::kTopK}},
    {Arity{2, 2},
     {HloOpcode::kComplex, HloOpcode::kPad, HloOpcode::kTriangularSolve, HloOpcode::kConvolution,
      HloOpcode::kGather, HloOpcode::kRng, HloOpcode::kSetDimensionSize,
      HloOpcode::kStochasticConvert, HloOpcode::kAddDependency}},
    {Arity{3, 3}, {HloOpcode::kSelectAndScatter, HloOpcode::kBatchNormTraining}},
    {Arity{5, 5}, {HloOpcode::kBatchNormInference, HloOpcode::kBatchNormGrad}},
    {Arity{0, 0}, {HloOpcode::kPartitionId, HloOpcode::kReplicaId}},
    {Arity{2, -1, /*pairs=*/true}, {HloOpcode::kReduceWindow}},
    {Arity{3, -1, /*pairs=*/false, /*odd=*/true}, {HloOpcode::kScatter}},
};

template <typename T>
bool Contains(std::initializer_list<T> list, T value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::optional<Arity> ArityFor(HloOpcode opcode) {
  const Rule rule = RuleFor(opcode);
  for (const RuleArity& entry : kRuleArities) {
    if (Contains(entry.rules, rule)) return entry.arity;
  }
  for (const OpcodeArity& entry : kOpcodeArities) {
    if (Contains(entry.opcodes, opcode)) return entry.arity;
  }
  return std::nullopt;
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
      return In(key, {"direction", "type", "order"});  // order=TOTAL: XLA >= 0.11
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
