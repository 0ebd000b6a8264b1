#include "analysis/dimension_map.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "analysis/selections.h"
#include "ir/computation.h"

namespace exla {
namespace {

using Mapping = DimensionMapping;

int64_t IndexOf(const std::vector<int64_t>& values, int64_t value) {
  auto it = std::find(values.begin(), values.end(), value);
  return it == values.end() ? -1 : static_cast<int64_t>(it - values.begin());
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return IndexOf(values, value) >= 0;
}

// Reshape keeps a dimension intact when it has the same size and the same
// number of elements before it (row-major) in operand and result: then slices
// along it are contiguous blocks in both. Returns the matching dimension of
// `to`, or NotSplittable.
Mapping MatchReshapeDimension(const Shape& from, const Shape& to, int64_t dim) {
  int64_t before = 1;
  for (int64_t i = 0; i < dim; ++i) before *= from.dim(static_cast<int>(i));
  int64_t size = from.dim(static_cast<int>(dim));
  int64_t prefix = 1;
  for (int i = 0; i < to.rank(); ++i) {
    if (prefix == before && to.dim(i) == size) return Mapping::Dimension(i);
    prefix *= to.dim(i);
  }
  return Mapping::NotSplittable();
}

bool SliceKeepsDimensionWhole(const HloInstruction& slice, int64_t dim) {
  std::vector<SliceBounds> bounds = slice.slice();
  if (dim >= static_cast<int64_t>(bounds.size())) return false;
  const SliceBounds& b = bounds[dim];
  return b.start == 0 && b.stride == 1 && b.limit == slice.operand(0)->shape().dim(static_cast<int>(dim));
}

// Non-contracting, non-batch dimensions of a dot operand, in order.
std::vector<int64_t> FreeDimensions(int rank, const std::vector<int64_t>& batch,
                                    const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t i = 0; i < rank; ++i) {
    if (!Contains(batch, i) && !Contains(contracting, i)) free.push_back(i);
  }
  return free;
}

// A scalar constant, possibly behind converts, as its literal text.
std::string ScalarConstantText(const HloInstruction* instruction) {
  while (instruction->Is(HloOpcode::kConvert) || instruction->Is(HloOpcode::kCopy)) instruction = instruction->operand(0);
  if (!instruction->Is(HloOpcode::kConstant) || instruction->shape().rank() != 0) return "";
  return instruction->payload();
}

// Every slice of the loop starts again from the reduce's init value. For
// idempotent ops (max, min, and, or) repeating it is harmless; for add and
// multiply it must be the identity.
bool InitValueCanRepeat(HloOpcode opcode, const std::string& literal) {
  switch (opcode) {
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
      return true;
    case HloOpcode::kAdd:
      return literal == "0" || literal == "-0" || literal == "false";
    case HloOpcode::kMultiply:
      return literal == "1" || literal == "true";
    default:
      return false;
  }
}

bool IsTriangularSolveRightHandSide(const HloInstruction& solve, int64_t dim) {
  // left_side=true solves A X = B: columns of B (the last dimension) are
  // independent problems; left_side=false solves X A = B: rows are. Batch
  // dimensions are independent as well.
  int rank = solve.shape().rank();
  bool left_side = solve.RawAttribute("left_side").value_or("false") == "true";
  if (dim < rank - 2) return true;
  return left_side ? dim == rank - 1 : dim == rank - 2;
}

}  // namespace

int64_t DimensionMapping::dimension() const {
  if (kind_ != Kind::kDimension) throw std::logic_error("not a dimension: " + ToString());
  return dim_;
}

std::string DimensionMapping::ToString() const {
  switch (kind_) {
    case Kind::kDimension:
      return "dimension " + std::to_string(dim_);
    case Kind::kUsedWhole:
      return "used whole";
    case Kind::kReducedAway:
      return "reduced away";
    case Kind::kNotSplittable:
      break;
  }
  return "not splittable";
}

WhyNot SplitterHandles(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kOther)) {
    return WhyNot::Because("exla does not know the opcode " + std::string(instruction.opcode_name()));
  }
  if (instruction.HasSideEffectNoRecurse()) return WhyNot::Because("it has side effects");
  if (instruction.shape().IsDynamic()) return WhyNot::Because("its shape is dynamic");
  if (instruction.IsElementwise()) return WhyNot::Ok();
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape:
    case HloOpcode::kReduce:
    case HloOpcode::kDot:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kIota:
    case HloOpcode::kSort:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kConstant:
    case HloOpcode::kParameter:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcast:
    case HloOpcode::kPad:
    case HloOpcode::kTopK:
      return WhyNot::Ok();
    default:
      return WhyNot::Because("the splitter does not handle '" +
                             std::string(instruction.opcode_name()) + "'");
  }
}

namespace {

// Operand dimensions that survive, in order, are the result dimensions. The
// init values are used whole; every input of a variadic reduce (an arg-min's
// values and indices) is sliced alike.
Mapping ReduceOperandDimension(const HloInstruction& reduce, int64_t dim, int operand_index) {
  if (operand_index >= reduce.operand_count() / 2) return Mapping::UsedWhole();
  const std::vector<int64_t>& reduced = reduce.dimensions();
  int64_t seen = 0;
  for (int64_t i = 0; i < reduce.operand(operand_index)->shape().rank(); ++i) {
    if (Contains(reduced, i)) continue;
    if (seen++ == dim) return Mapping::Dimension(i);
  }
  return Mapping::NotSplittable();
}

// Result dimensions: batch, lhs free, rhs free.
Mapping DotOperandDimension(const HloInstruction& dot, int64_t dim, int operand_index) {
  DotDimensions d = dot.dot_dimensions();
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  int64_t n_batch = static_cast<int64_t>(d.lhs_batch.size());
  std::vector<int64_t> lhs_free = FreeDimensions(lhs.rank(), d.lhs_batch, d.lhs_contracting);
  std::vector<int64_t> rhs_free = FreeDimensions(rhs.rank(), d.rhs_batch, d.rhs_contracting);
  if (dim < n_batch) {
    return Mapping::Dimension(operand_index == 0 ? d.lhs_batch[dim] : d.rhs_batch[dim]);
  }
  dim -= n_batch;
  if (dim < static_cast<int64_t>(lhs_free.size())) {
    return operand_index == 0 ? Mapping::Dimension(lhs_free[dim]) : Mapping::UsedWhole();
  }
  dim -= static_cast<int64_t>(lhs_free.size());
  return operand_index == 1 ? Mapping::Dimension(rhs_free[dim]) : Mapping::UsedWhole();
}

// Only when nothing is padded along the split dimension.
Mapping PadOperandDimension(const HloInstruction& pad, int64_t dim, int operand_index) {
  if (operand_index == 1) return Mapping::UsedWhole();
  PaddingConfig padding = pad.padding_config();
  if (dim < static_cast<int64_t>(padding.size()) && padding[dim].IsZero()) {
    return Mapping::Dimension(dim);
  }
  return Mapping::NotSplittable();
}

}  // namespace

Mapping OperandDimension(const HloInstruction& instruction, int64_t dim, int operand_index) {
  const HloInstruction& operand = *instruction.operand(operand_index);
  if (instruction.IsElementwise() || instruction.Is(HloOpcode::kCopy)) {
    // Scalars (allowed in some elementwise ops such as clamp) are used whole.
    if (operand.shape().rank() == 0) return Mapping::UsedWhole();
    return Mapping::Dimension(dim);
  }
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast: {
      int64_t i = IndexOf(instruction.dimensions(), dim);
      return i < 0 ? Mapping::UsedWhole() : Mapping::Dimension(i);
    }
    case HloOpcode::kTranspose:
      return Mapping::Dimension(instruction.dimensions()[dim]);
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return MatchReshapeDimension(instruction.shape(), operand.shape(), dim);
    case HloOpcode::kReduce:
      return ReduceOperandDimension(instruction, dim, operand_index);
    case HloOpcode::kDot:
      return DotOperandDimension(instruction, dim, operand_index);
    case HloOpcode::kSlice:
      return SliceKeepsDimensionWhole(instruction, dim) ? Mapping::Dimension(dim)
                                                        : Mapping::NotSplittable();
    case HloOpcode::kPad:
      return PadOperandDimension(instruction, dim, operand_index);
    case HloOpcode::kConcatenate:
    case HloOpcode::kSort:
      // Along their own dimension every slice needs all of the operands.
      return instruction.dimensions()[0] == dim ? Mapping::NotSplittable() : Mapping::Dimension(dim);
    case HloOpcode::kTopK:
      // top-k works along the last dimension; rows are independent.
      return dim == operand.shape().rank() - 1 ? Mapping::NotSplittable() : Mapping::Dimension(dim);
    case HloOpcode::kGetTupleElement:
      return Mapping::Dimension(dim);
    case HloOpcode::kSetDimensionSize:
      if (operand_index == 1) return Mapping::UsedWhole();
      return instruction.dimensions()[0] == dim ? Mapping::NotSplittable() : Mapping::Dimension(dim);
    case HloOpcode::kTriangularSolve: {
      if (!IsTriangularSolveRightHandSide(instruction, dim)) return Mapping::NotSplittable();
      int rank = instruction.shape().rank();
      if (operand_index == 1) return Mapping::Dimension(dim);
      // The matrix A is used whole, except along batch dimensions.
      return dim < rank - 2 ? Mapping::Dimension(dim) : Mapping::UsedWhole();
    }
    default:
      return Mapping::NotSplittable();
  }
}

Mapping ResultDimension(const HloInstruction& instruction, int operand_index, int64_t dim) {
  if (IsMergedSelection(instruction, operand_index, dim)) return Mapping::ReducedAway();
  if (instruction.Is(HloOpcode::kReduce)) {
    if (operand_index >= instruction.operand_count() / 2) return Mapping::NotSplittable();
    std::vector<int64_t> reduced = instruction.dimensions();
    if (Contains(reduced, dim)) {
      // A variadic reduce merges only as a selection (above).
      return instruction.operand_count() == 2 ? Mapping::ReducedAway() : Mapping::NotSplittable();
    }
    int64_t result = 0;
    for (int64_t i = 0; i < dim; ++i) result += Contains(reduced, i) ? 0 : 1;
    return Mapping::Dimension(result);
  }
  if (instruction.Is(HloOpcode::kDot)) {
    DotDimensions d = instruction.dot_dimensions();
    const bool lhs = operand_index == 0;
    const std::vector<int64_t>& batch = lhs ? d.lhs_batch : d.rhs_batch;
    const std::vector<int64_t>& contracting = lhs ? d.lhs_contracting : d.rhs_contracting;
    if (Contains(contracting, dim)) return Mapping::ReducedAway();
    int64_t b = IndexOf(batch, dim);
    if (b >= 0) return Mapping::Dimension(b);
    const Shape& lhs_shape = instruction.operand(0)->shape();
    std::vector<int64_t> lhs_free = FreeDimensions(lhs_shape.rank(), d.lhs_batch, d.lhs_contracting);
    int64_t offset = static_cast<int64_t>(batch.size());
    if (!lhs) offset += static_cast<int64_t>(lhs_free.size());
    std::vector<int64_t> free =
        lhs ? lhs_free
            : FreeDimensions(instruction.operand(1)->shape().rank(), d.rhs_batch, d.rhs_contracting);
    return Mapping::Dimension(offset + IndexOf(free, dim));
  }
  // Everything else: invert OperandDimension over the result dimensions.
  const bool tuple_of_rows = instruction.Is(HloOpcode::kSort) || instruction.Is(HloOpcode::kTopK);
  if (!instruction.shape().IsArray() && !tuple_of_rows) return Mapping::NotSplittable();
  const Shape& shape = tuple_of_rows ? instruction.operand(0)->shape() : instruction.shape();
  for (int64_t r = 0; r < shape.rank(); ++r) {
    if (OperandDimension(instruction, r, operand_index) == Mapping::Dimension(dim)) {
      return Mapping::Dimension(r);
    }
  }
  return Mapping::NotSplittable();
}

std::optional<HloOpcode> AccumulationOpcode(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kDot)) return HloOpcode::kAdd;
  if (!instruction.Is(HloOpcode::kReduce) || instruction.operand_count() != 2) return std::nullopt;
  const HloComputation* reducer = instruction.CalledComputation("to_apply");
  if (reducer == nullptr) return std::nullopt;
  const HloInstruction* root = reducer->root();
  // The reducer must be `op(p0, p1)` for an associative, commutative op.
  bool associative = false;
  for (HloOpcode op : {HloOpcode::kAdd, HloOpcode::kMultiply, HloOpcode::kMaximum,
                       HloOpcode::kMinimum, HloOpcode::kAnd, HloOpcode::kOr}) {
    associative |= root->Is(op);
  }
  if (!associative || root->operand_count() != 2 || !root->operand(0)->Is(HloOpcode::kParameter) ||
      !root->operand(1)->Is(HloOpcode::kParameter)) {
    return std::nullopt;
  }
  if (!InitValueCanRepeat(root->opcode(), ScalarConstantText(instruction.operand(1)))) {
    return std::nullopt;
  }
  return root->opcode();
}

}  // namespace exla
