// Shape rules of array operations: the printed shape against the one the
// operands and attributes give (elementwise ops, shape manipulation,
// slicing, concatenation, iota, dot).
#include "ir/builder.h"  // InferDotShape: the verifier and the builder agree on dot shapes
#include "ir/verifier_checks.h"

namespace exla {
namespace verifier_internal {
namespace {

// One operand, elementwise: the operand's shape with the element type
// `result_type` gives (the operand's own when unset).
void CheckElementwiseUnary(const InstructionCheck& check, std::optional<PrimitiveType> result_type) {
  if (!check.ExpectOperands(1) || !check.ExpectArrays()) return;
  Shape inferred = check.operand_shape(0);
  if (result_type) inferred.set_element_type(*result_type);
  // abs of a complex number is real.
  if (IsComplexType(inferred.element_type())) inferred.set_element_type(check.shape().element_type());
  check.ExpectShape(inferred);
}

// Two operands of one shape, elementwise.
void CheckElementwiseBinary(const InstructionCheck& check, bool compare) {
  if (!check.ExpectOperands(2) || !check.ExpectArrays()) return;
  const Shape& lhs = check.operand_shape(0);
  const Shape& rhs = check.operand_shape(1);
  if (!SameShape(lhs, rhs)) {
    return check.Error(check.op() + " operands differ: " + lhs.ToString(false) + " vs " +
                       rhs.ToString(false));
  }
  if (compare && !check.instruction().comparison_direction().has_value()) {
    return check.Error("compare needs a direction (EQ, NE, LT, LE, GT or GE)");
  }
  Shape inferred = lhs;
  if (compare) inferred.set_element_type(PrimitiveType::kPred);
  check.ExpectShape(inferred);
}

// One operand whose dimensions `dimensions` names: each once (transpose's
// permutation, reverse's reversed dimensions).
bool CheckDimensionsAttribute(const InstructionCheck& check) {
  if (!check.ExpectOperands(1) || !check.ExpectArrays()) return false;
  return check.ExpectDimensions(check.op() + " dimensions", check.instruction().dimensions(),
                                check.operand_shape(0).rank());
}

}  // namespace

void CheckUnary(const InstructionCheck& check) { CheckElementwiseUnary(check, std::nullopt); }

void CheckUnaryToPred(const InstructionCheck& check) {
  CheckElementwiseUnary(check, PrimitiveType::kPred);
}

// convert changes the element type, to whatever it prints.
void CheckConvert(const InstructionCheck& check) {
  CheckElementwiseUnary(check, check.shape().element_type());
}

void CheckBinary(const InstructionCheck& check) { CheckElementwiseBinary(check, false); }

void CheckCompare(const InstructionCheck& check) { CheckElementwiseBinary(check, true); }

// select(pred, on_true, on_false): branches of one shape, a scalar predicate
// or one of the branches' dimensions.
void CheckSelect(const InstructionCheck& check) {
  if (!check.ExpectOperands(3) || !check.ExpectArrays()) return;
  const Shape& predicate = check.operand_shape(0);
  const Shape& on_true = check.operand_shape(1);
  const Shape& on_false = check.operand_shape(2);
  if (!SameShape(on_true, on_false)) {
    return check.Error("select branches differ: " + on_true.ToString(false) + " vs " +
                       on_false.ToString(false));
  }
  if (predicate.element_type() != PrimitiveType::kPred ||
      (predicate.rank() != 0 && predicate.dims() != on_true.dims())) {
    return check.Error("select predicate " + predicate.ToString(false) +
                       " must be pred of the branches' dimensions");
  }
  check.ExpectShape(on_true);
}

// clamp(min, operand, max): each bound a scalar or of the operand's shape.
void CheckClamp(const InstructionCheck& check) {
  if (!check.ExpectOperands(3) || !check.ExpectArrays()) return;
  const Shape& value = check.operand_shape(1);
  for (const Shape* bound : {&check.operand_shape(0), &check.operand_shape(2)}) {
    if (bound->rank() != 0 && !SameShape(*bound, value)) {
      return check.Error("clamp bound " + bound->ToString(false) + " must be a scalar or match " +
                         value.ToString(false));
    }
  }
  check.ExpectShape(value);
}

void CheckBroadcast(const InstructionCheck& check) {
  if (!check.ExpectOperands(1) || !check.ExpectArrays()) return;
  const Shape& shape = check.shape();
  const Shape& in = check.operand_shape(0);
  std::vector<int64_t> dims = check.instruction().dimensions();
  if (static_cast<int>(dims.size()) != in.rank()) {
    return check.Error("broadcast dimensions=" + Join(dims) + " must name one result dimension" +
                       " per operand dimension (" + std::to_string(in.rank()) + ")");
  }
  if (!check.ExpectDimensions("broadcast dimensions", dims, shape.rank())) return;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t from = in.dim(static_cast<int>(i));
    const int64_t to = shape.dim(static_cast<int>(dims[i]));
    if (to != from) {
      return check.Error("broadcast maps operand dimension " + std::to_string(i) + " (size " +
                         std::to_string(from) + ") to result dimension " +
                         std::to_string(dims[i]) + " (size " + std::to_string(to) + ")");
    }
  }
  if (shape.element_type() != in.element_type()) {
    check.Error("broadcast changes the element type");
  }
}

void CheckReshape(const InstructionCheck& check) {
  if (!check.ExpectOperands(1) || !check.ExpectArrays()) return;
  const Shape& in = check.operand_shape(0);
  if (check.shape().ElementCount() != in.ElementCount() ||
      check.shape().element_type() != in.element_type()) {
    check.Error("reshape of " + in.ToString(false) + " to " + check.shape().ToString(false) +
                " changes the element count or type");
  }
}

void CheckTranspose(const InstructionCheck& check) {
  if (!CheckDimensionsAttribute(check)) return;
  const Shape& in = check.operand_shape(0);
  std::vector<int64_t> dims = check.instruction().dimensions();
  if (static_cast<int>(dims.size()) != in.rank()) {
    return check.Error("transpose dimensions=" + Join(dims) + " is not a permutation of " +
                       std::to_string(in.rank()) + " dimensions");
  }
  Shape inferred = in;
  for (size_t i = 0; i < dims.size(); ++i) {
    inferred.set_dim(static_cast<int>(i), in.dim(static_cast<int>(dims[i])));
  }
  check.ExpectShape(inferred);
}

void CheckReverse(const InstructionCheck& check) {
  if (CheckDimensionsAttribute(check)) check.ExpectShape(check.operand_shape(0));
}

void CheckSlice(const InstructionCheck& check) {
  if (!check.ExpectOperands(1) || !check.ExpectArrays()) return;
  const Shape& in = check.operand_shape(0);
  std::vector<SliceBounds> bounds = check.instruction().slice();
  if (static_cast<int>(bounds.size()) != in.rank()) {
    return check.Error("slice gives " + std::to_string(bounds.size()) + " bound(s) for rank " +
                       std::to_string(in.rank()));
  }
  Shape inferred = in;
  for (int i = 0; i < in.rank(); ++i) {
    const SliceBounds& b = bounds[i];
    if (b.start < 0 || b.start > b.limit || b.limit > in.dim(i) || b.stride < 1) {
      return check.Error("slice bounds [" + std::to_string(b.start) + ":" +
                         std::to_string(b.limit) + ":" + std::to_string(b.stride) +
                         "] out of range for dimension " + std::to_string(i) + " of size " +
                         std::to_string(in.dim(i)));
    }
    inferred.set_dim(i, (b.limit - b.start + b.stride - 1) / b.stride);
  }
  check.ExpectShape(inferred);
}

void CheckDynamicSlice(const InstructionCheck& check) {
  if (!check.ExpectArrays() || check.operand_count() < 1) return;
  const Shape& in = check.operand_shape(0);
  if (!check.ExpectStartIndices(1, in)) return;
  std::vector<int64_t> sizes = check.instruction().IntListAttribute("dynamic_slice_sizes");
  if (static_cast<int>(sizes.size()) != in.rank()) {
    return check.Error("dynamic_slice_sizes=" + Join(sizes) + " does not match rank " +
                       std::to_string(in.rank()));
  }
  Shape inferred = in;
  for (int i = 0; i < in.rank(); ++i) {
    if (sizes[i] < 0 || sizes[i] > in.dim(i)) {
      return check.Error("dynamic_slice_sizes=" + Join(sizes) + " exceeds the operand " +
                         in.ToString(false));
    }
    inferred.set_dim(i, sizes[i]);
  }
  check.ExpectShape(inferred);
}

void CheckDynamicUpdateSlice(const InstructionCheck& check) {
  if (!check.ExpectArrays() || check.operand_count() < 2) return;
  const Shape& in = check.operand_shape(0);
  const Shape& update = check.operand_shape(1);
  if (!check.ExpectStartIndices(2, in)) return;
  if (update.rank() != in.rank()) {
    return check.Error("dynamic-update-slice update " + update.ToString(false) +
                       " has another rank than the operand " + in.ToString(false));
  }
  for (int i = 0; i < in.rank(); ++i) {
    if (update.dim(i) > in.dim(i)) {
      return check.Error("dynamic-update-slice update " + update.ToString(false) +
                         " is larger than the operand " + in.ToString(false));
    }
  }
  check.ExpectShape(in);
}

void CheckConcatenate(const InstructionCheck& check) {
  if (check.operand_count() < 1 || !check.ExpectArrays()) return;
  std::vector<int64_t> dims = check.instruction().dimensions();
  const Shape& first = check.operand_shape(0);
  if (dims.size() != 1) return check.Error("concatenate needs one dimension, has " + Join(dims));
  if (!check.ExpectDimensions("concatenate dimensions", dims, first.rank())) return;
  const int along = static_cast<int>(dims[0]);
  Shape inferred = first;
  for (int i = 1; i < check.operand_count(); ++i) {
    const Shape& next = check.operand_shape(i);
    bool fits = next.rank() == first.rank() && next.element_type() == first.element_type();
    for (int d = 0; fits && d < first.rank(); ++d) fits = d == along || next.dim(d) == first.dim(d);
    if (!fits) {
      return check.Error("concatenate operands " + first.ToString(false) + " and " +
                         next.ToString(false) + " differ outside dimension " +
                         std::to_string(along));
    }
    inferred.set_dim(along, inferred.dim(along) + next.dim(along));
  }
  check.ExpectShape(inferred);
}

void CheckIota(const InstructionCheck& check) {
  const Shape& shape = check.shape();
  std::optional<int64_t> dim = check.instruction().IntAttribute("iota_dimension");
  if (!shape.IsArray() || !dim || *dim < 0 || *dim >= shape.rank()) {
    check.Error("iota_dimension out of range for " + shape.ToString(false));
  }
}

void CheckDot(const InstructionCheck& check) {
  if (!check.ExpectOperands(2) || !check.ExpectArrays()) return;
  const Shape& lhs = check.operand_shape(0);
  const Shape& rhs = check.operand_shape(1);
  DotDimensions d = check.instruction().dot_dimensions();
  std::vector<int64_t> lhs_all = d.lhs_batch, rhs_all = d.rhs_batch;
  lhs_all.insert(lhs_all.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  rhs_all.insert(rhs_all.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  if (!check.ExpectDimensions("dot lhs batch and contracting dims", lhs_all, lhs.rank()) ||
      !check.ExpectDimensions("dot rhs batch and contracting dims", rhs_all, rhs.rank())) {
    return;
  }
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return check.Error("dot has unequal numbers of lhs and rhs batch or contracting dimensions");
  }
  for (size_t i = 0; i < lhs_all.size(); ++i) {
    const int64_t lhs_size = lhs.dim(static_cast<int>(lhs_all[i]));
    const int64_t rhs_size = rhs.dim(static_cast<int>(rhs_all[i]));
    if (lhs_size != rhs_size) {
      return check.Error("dot pairs lhs dimension " + std::to_string(lhs_all[i]) + " (size " +
                         std::to_string(lhs_size) + ") with rhs dimension " +
                         std::to_string(rhs_all[i]) + " (size " + std::to_string(rhs_size) + ")");
    }
  }
  // The result type may differ (preferred_element_type): compare dimensions.
  check.ExpectShape(InferDotShape(lhs, rhs, d, check.shape().element_type()));
}

}  // namespace verifier_internal
}  // namespace exla
