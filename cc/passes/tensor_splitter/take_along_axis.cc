#include "passes/tensor_splitter/take_along_axis.h"

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/module.h"

namespace exla {
namespace {

// Whether `instruction`'s attributes are exactly `expected` (key, raw text).
bool HasAttributes(const HloInstruction& instruction,
                   const std::vector<std::pair<const char*, const char*>>& expected) {
  for (const auto& [key, value] : expected) {
    if (instruction.RawAttribute(key).value_or("") != value) return false;
  }
  return true;
}

// x[r, index[r]] for every row r of a matrix: indices [R, 1, 1], one batch
// dimension (the rows), the column collapsed. The form jax.numpy's
// take_along_axis lowers to.
bool IsRowElementGather(const HloInstruction& gather) {
  if (!gather.Is(HloOpcode::kGather) || gather.operand_count() != 2) return false;
  const Shape& operand = gather.operand(0)->shape();
  const Shape& indices = gather.operand(1)->shape();
  return operand.IsArray() && operand.rank() == 2 && IsFloatingPointType(operand.element_type()) &&
         indices.IsArray() && indices.dims() == std::vector<int64_t>{operand.dim(0), 1, 1} &&
         gather.shape().IsArray() && gather.shape().dims() == std::vector<int64_t>{operand.dim(0), 1} &&
         HasAttributes(gather, {{"offset_dims", "{}"}, {"collapsed_slice_dims", "{1}"},
                                {"start_index_map", "{1}"}, {"operand_batching_dims", "{0}"},
                                {"start_indices_batching_dims", "{0}"}, {"index_vector_dim", "2"},
                                {"slice_sizes", "{1,1}"}});
}

// x[r, index[r]] += update[r]: the transpose of the gather above.
bool IsRowElementScatterAdd(const HloInstruction& scatter) {
  if (!scatter.Is(HloOpcode::kScatter) || scatter.operand_count() != 3) return false;
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& indices = scatter.operand(1)->shape();
  const Shape& updates = scatter.operand(2)->shape();
  const HloComputation* combiner = scatter.CalledComputation("to_apply");
  if (combiner == nullptr || !combiner->root()->Is(HloOpcode::kAdd) ||
      !combiner->root()->operand(0)->Is(HloOpcode::kParameter) ||
      !combiner->root()->operand(1)->Is(HloOpcode::kParameter) ||
      combiner->root()->operand(0)->parameter_number() != 0) {
    return false;
  }
  return operand.IsArray() && operand.rank() == 2 && IsFloatingPointType(operand.element_type()) &&
         indices.IsArray() && indices.dims() == std::vector<int64_t>{operand.dim(0), 1, 1} &&
         updates.IsArray() && updates.dims() == std::vector<int64_t>{operand.dim(0), 1} &&
         HasAttributes(scatter, {{"update_window_dims", "{}"}, {"inserted_window_dims", "{1}"},
                                 {"scatter_dims_to_operand_dims", "{1}"},
                                 {"input_batching_dims", "{0}"},
                                 {"scatter_indices_batching_dims", "{0}"},
                                 {"index_vector_dim", "2"}});
}

// iota == index, per row: where row r's element sits.
HloInstruction* RowMask(HloBuilder& b, HloInstruction* index, const std::vector<int64_t>& dims) {
  HloInstruction* columns = b.Iota(Shape::Array(index->shape().element_type(), dims), 1);
  return b.Compare(b.Broadcast(index, dims, {0}), columns, ComparisonDirection::kEq);
}

// A gather clamps its start index into the row (a scatter skips an update
// out of it, which no column matches anyway).
HloInstruction* Clamped(HloBuilder& b, HloInstruction* index, int64_t columns) {
  const std::vector<int64_t>& dims = index->shape().dims();
  const PrimitiveType type = index->shape().element_type();
  HloInstruction* low = b.Broadcast(b.ConstantScalar(type, 0), dims, {});
  HloInstruction* high = b.Broadcast(b.ConstantScalar(type, static_cast<double>(columns - 1)), dims, {});
  return b.Binary(HloOpcode::kMaximum, b.Binary(HloOpcode::kMinimum, index, high), low);
}

void RewriteGather(HloInstruction* gather) {
  HloComputation* computation = gather->parent();
  HloBuilder b(computation);
  HloInstruction* x = gather->operand(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  const PrimitiveType type = x->shape().element_type();
  HloInstruction* index = b.Reshape(gather->operand(1), {dims[0]});
  HloInstruction* mask = RowMask(b, Clamped(b, index, dims[1]), dims);
  HloInstruction* negative_zero = b.ConstantScalar(type, -0.0);
  HloInstruction* picked = b.Select(mask, x, b.Broadcast(negative_zero, dims, {}));
  HloComputation* add = AddScalarReducer(computation->parent(), HloOpcode::kAdd, type, computation);
  HloInstruction* element = b.Reduce(picked, negative_zero, {1}, add);
  gather->ReplaceAllUsesWith(b.Reshape(element, gather->shape().dims()));
}

void RewriteScatter(HloInstruction* scatter) {
  HloBuilder b(scatter->parent());
  HloInstruction* x = scatter->operand(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  HloInstruction* index = b.Reshape(scatter->operand(1), {dims[0]});
  HloInstruction* update = b.Broadcast(b.Reshape(scatter->operand(2), {dims[0]}), dims, {0});
  HloInstruction* updated = b.Binary(HloOpcode::kAdd, x, update);
  scatter->ReplaceAllUsesWith(b.Select(RowMask(b, index, dims), updated, x));
}

}  // namespace

bool RewriteTakeAlongAxis(HloComputation* computation, int64_t threshold) {
  bool changed = false;
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (IsRowElementGather(*instruction) && instruction->operand(0)->shape().ByteSize() > threshold) {
      RewriteGather(instruction);
      changed = true;
    } else if (IsRowElementScatterAdd(*instruction) && instruction->shape().ByteSize() > threshold) {
      RewriteScatter(instruction);
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
