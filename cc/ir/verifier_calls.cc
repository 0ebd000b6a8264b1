// Shape rules of instructions that call computations (reduce, sort, while,
// call) or build and take apart tuples: the called computations' parameters
// and results against the operands and the printed shape.
#include <algorithm>

#include "ir/verifier_checks.h"

namespace exla {
namespace verifier_internal {
namespace {

// The element types reduce reduces (one per input), or nothing after
// reporting an initial value of another type. Floating-point initial values
// may differ in precision only.
std::optional<std::vector<PrimitiveType>> ReducedTypes(const InstructionCheck& check, int n) {
  std::vector<PrimitiveType> types;
  for (int i = 0; i < n; ++i) {
    PrimitiveType in = check.operand_shape(i).element_type();
    PrimitiveType init = check.operand_shape(n + i).element_type();
    if (in != init && !(IsFloatingPointType(in) && IsFloatingPointType(init))) {
      check.Error("reduce operand " + std::to_string(i) + " is " +
                  check.operand_shape(i).ToString(false) + " but its initial value is " +
                  check.operand_shape(n + i).ToString(false));
      return std::nullopt;
    }
    types.push_back(in);
  }
  return types;
}

// The element type of reduce's `i`-th result of `n`. XLA takes it from the
// computation's result (it may be wider than the initial value: bf16 values
// summed in f32).
PrimitiveType ReducedResultType(const InstructionCheck& check, const HloComputation& reducer,
                                int i, int n) {
  PrimitiveType type = check.operand_shape(n + i).element_type();
  if (const HloInstruction* root = reducer.root()) {
    const Shape& r = root->shape();
    if (n == 1 && r.IsArray()) type = r.element_type();
    if (n > 1 && r.IsTuple() && static_cast<int>(r.tuple_shapes().size()) == n &&
        r.tuple_shape(i).IsArray()) {
      type = r.tuple_shape(i).element_type();
    }
  }
  return type;
}

// sort's comparator takes two scalars of each operand's type, in order, and
// returns pred[] (XLA: "comparator block argument #i"). False after a
// violation.
bool CheckComparator(const InstructionCheck& check, const HloComputation& comparator,
                     const std::vector<Shape>& operands) {
  std::vector<HloInstruction*> parameters = comparator.parameters();
  if (parameters.size() != 2 * operands.size()) {
    check.Error("sort comparator '" + comparator.name() + "' takes " +
                std::to_string(parameters.size()) + " parameter(s), needs " +
                std::to_string(2 * operands.size()));
    return false;
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Shape& p = parameters[i]->shape();
    if (!p.IsArray() || p.rank() != 0 || p.element_type() != operands[i / 2].element_type()) {
      check.Error("sort comparator '" + comparator.name() + "' parameter " +
                  std::to_string(i) + " is " + p.ToString(false) + ", not a scalar of " +
                  "operand " + std::to_string(i / 2) + "'s type");
      return false;
    }
  }
  if (comparator.root() &&
      !SameShape(comparator.root()->shape(), Shape::Array(PrimitiveType::kPred, {}))) {
    check.Error("sort comparator '" + comparator.name() + "' must return pred[]");
    return false;
  }
  return true;
}

// A while loop's body and condition each take one parameter of the loop's
// shape; the body returns that shape, the condition pred[].
void CheckLoopComputations(const InstructionCheck& check, const HloComputation& body,
                           const HloComputation& condition) {
  const Shape& shape = check.shape();
  for (const HloComputation* callee : {&body, &condition}) {
    std::vector<HloInstruction*> parameters = callee->parameters();
    if (parameters.size() != 1 || !SameShape(parameters[0]->shape(), shape)) {
      return check.Error("while " + std::string(callee == &body ? "body" : "condition") + " '" +
                         callee->name() + "' must take one parameter of shape " +
                         shape.ToString(false));
    }
  }
  if (body.root() && !SameShape(body.root()->shape(), shape)) {
    return check.Error("while body '" + body.name() + "' returns " +
                       body.root()->shape().ToString(false) + ", not " + shape.ToString(false));
  }
  if (condition.root() &&
      !SameShape(condition.root()->shape(), Shape::Array(PrimitiveType::kPred, {}))) {
    check.Error("while condition '" + condition.name() + "' must return pred[]");
  }
}

}  // namespace

// A reduction computation (reduce's to_apply) for operands of element types
// `types`: 2n scalar parameters, the i-th and (n+i)-th of operand i's type,
// returning n scalars of those types. Exactly, as XLA's HLO verifier wants
// ("Shape mismatch between to_apply computation parameter and operand");
// only the initial values may differ in floating precision.
void InstructionCheck::ExpectReducer(const HloComputation& reducer,
                                     const std::vector<PrimitiveType>& types) const {
  const size_t n = types.size();
  std::vector<HloInstruction*> parameters = reducer.parameters();
  if (parameters.size() != 2 * n) {
    return Error("reduction computation '" + reducer.name() + "' takes " +
                 std::to_string(parameters.size()) + " parameter(s), needs " +
                 std::to_string(2 * n));
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& p = parameters[i]->shape();
    if (!p.IsArray() || p.rank() != 0 || p.element_type() != types[i % n]) {
      return Error("reduction computation '" + reducer.name() + "' parameter " +
                   std::to_string(i) + " is " + p.ToString(false) + ", but the values " +
                   "reduced are " + std::string(PrimitiveTypeName(types[i % n])));
    }
  }
  if (reducer.root() == nullptr) return;
  const Shape& root = reducer.root()->shape();
  std::vector<Shape> results = n == 1 ? std::vector<Shape>{root}
                                      : (root.IsTuple() ? root.tuple_shapes()
                                                        : std::vector<Shape>{});
  bool fits = results.size() == n;
  for (size_t i = 0; fits && i < n; ++i) {
    fits = results[i].IsArray() && results[i].rank() == 0 &&
           results[i].element_type() == types[i];
  }
  if (!fits) {
    Error("reduction computation '" + reducer.name() + "' returns " + root.ToString(false) +
          ", not " + std::to_string(n) + " scalar(s) of the reduced values' types");
  }
}

void CheckReduce(const InstructionCheck& check) {
  const int n = check.operand_count() / 2;
  if (check.operand_count() % 2 != 0 || n == 0) {
    return check.Error("reduce needs pairs of operands and initial values, has " +
                       std::to_string(check.operand_count()) + " operand(s)");
  }
  const HloComputation* reducer = check.Callee("to_apply");
  if (reducer == nullptr) return;
  std::optional<std::vector<PrimitiveType>> types = ReducedTypes(check, n);
  if (!types) return;
  check.ExpectReducer(*reducer, *types);
  std::vector<Shape> results;
  std::vector<int64_t> dims = check.instruction().dimensions();
  for (int i = 0; i < n; ++i) {
    const Shape& in = check.operand_shape(i);
    if (!in.IsArray()) return check.Error("reduce operands must be arrays");
    if (!check.ExpectDimensions("reduce dimensions", dims, in.rank())) return;
    std::vector<int64_t> kept;
    for (int k = 0; k < in.rank(); ++k) {
      if (std::find(dims.begin(), dims.end(), k) == dims.end()) kept.push_back(in.dim(k));
    }
    results.push_back(Shape::Array(ReducedResultType(check, *reducer, i, n), kept));
  }
  check.ExpectShape(n == 1 ? results[0] : Shape::Tuple(results));
}

// sort(keys, values...): every operand sorted along one dimension.
void CheckSort(const InstructionCheck& check) {
  const HloComputation* comparator = check.Callee("to_apply");
  if (comparator == nullptr) return;
  if (check.operand_count() == 0) return check.Error("sort needs at least one operand");
  std::vector<Shape> results;
  for (int i = 0; i < check.operand_count(); ++i) {
    const Shape& in = check.operand_shape(i);
    if (!in.IsArray()) return check.Error("sort operands must be arrays");
    if (in.dims() != check.operand_shape(0).dims()) {
      return check.Error("sort operands differ: " + check.operand_shape(0).ToString(false) +
                         " vs " + in.ToString(false));
    }
    results.push_back(in);
  }
  if (!CheckComparator(check, *comparator, results)) return;
  std::vector<int64_t> dims = check.instruction().dimensions();
  if (dims.size() != 1) return check.Error("sort needs one dimension, has " + Join(dims));
  if (!check.ExpectDimensions("sort dimensions", dims, check.operand_shape(0).rank())) return;
  check.ExpectShape(results.size() == 1 ? results[0] : Shape::Tuple(results));
}

void CheckTuple(const InstructionCheck& check) {
  std::vector<Shape> elements;
  for (const HloInstruction* operand : check.instruction().operands()) {
    elements.push_back(operand->shape());
  }
  check.ExpectShape(Shape::Tuple(elements));
}

void CheckGetTupleElement(const InstructionCheck& check) {
  if (!check.ExpectOperands(1)) return;
  std::optional<int64_t> index = check.instruction().IntAttribute("index");
  const Shape& tuple = check.operand_shape(0);
  if (!tuple.IsTuple() || !index || *index < 0 ||
      *index >= static_cast<int64_t>(tuple.tuple_shapes().size())) {
    return check.Error("get-tuple-element index out of range for " + tuple.ToString(false));
  }
  check.ExpectShape(tuple.tuple_shape(static_cast<int>(*index)));
}

void CheckWhile(const InstructionCheck& check) {
  if (!check.ExpectOperands(1)) return;
  const HloComputation* body = check.Callee("body");
  const HloComputation* condition = check.Callee("condition");
  if (body == nullptr || condition == nullptr) return;
  check.ExpectShape(check.operand_shape(0));
  CheckLoopComputations(check, *body, *condition);
}

void CheckCall(const InstructionCheck& check) {
  const HloComputation* callee = check.Callee("to_apply");
  if (callee == nullptr) return;
  std::vector<HloInstruction*> parameters = callee->parameters();
  if (static_cast<int>(parameters.size()) != check.operand_count()) {
    return check.Error("call passes " + std::to_string(check.operand_count()) +
                       " operand(s) to '" + callee->name() + "', which takes " +
                       std::to_string(parameters.size()));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Shape& operand = check.operand_shape(static_cast<int>(i));
    if (!SameShape(parameters[i]->shape(), operand)) {
      return check.Error("call operand " + std::to_string(i) + " is " + operand.ToString(false) +
                         " but '" + callee->name() + "' takes " +
                         parameters[i]->shape().ToString(false));
    }
  }
  if (callee->root()) check.ExpectShape(callee->root()->shape());
}

}  // namespace verifier_internal
}  // namespace exla
