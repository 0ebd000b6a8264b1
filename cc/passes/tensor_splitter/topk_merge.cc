#include "passes/tensor_splitter/topk_merge.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/selections.h"
#include "ir/computation.h"
#include "ir/module.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

bool Largest(const HloInstruction& topk) { return topk.RawAttribute("largest") != "false"; }

// The value every real one beats: the last in the total order the merge
// uses. For floating point that is the NaN with every bit set (most negative
// in XLA's total order) for the largest k, its positive twin for the
// smallest; built as an integer bit pattern because no literal spells a NaN
// payload.
HloInstruction* WorstValue(HloBuilder& b, PrimitiveType type, bool largest) {
  if (IsFloatingPointType(type)) {
    const PrimitiveType bits = *SameWidthInt(type);
    const int width = PrimitiveTypeBitWidth(type);
    const int64_t pattern = largest ? -1 : static_cast<int64_t>((uint64_t{1} << (width - 1)) - 1);
    HloInstruction* integer = b.ConstantIndex(pattern, bits);
    return b.computation()->Add(HloOpcode::kBitcastConvert, Shape::Array(type, {}), {integer});
  }
  const int64_t extreme = type == PrimitiveType::kS32
                              ? (largest ? std::numeric_limits<int32_t>::min()
                                         : std::numeric_limits<int32_t>::max())
                              : (largest ? std::numeric_limits<int64_t>::min()
                                         : std::numeric_limits<int64_t>::max());
  return b.ConstantIndex(extreme, type);
}

// The merge's order on (value, index) pairs: values in total order (the
// larger first for the largest k), equal values by index, the lower first.
// A strict order on distinct pairs, so the sort needs no stability and the
// result does not depend on the order candidates arrive in.
HloComputation* PairOrder(HloModule* module, const HloComputation* before, PrimitiveType value_type,
                          PrimitiveType index_type, bool largest) {
  auto owned = std::make_unique<HloComputation>(module->UniqueName("topk_merge_order"));
  HloComputation* order = module->AddComputationBefore(std::move(owned), before);
  HloBuilder b(order);
  HloInstruction* lhs = b.Parameter(0, Shape::Array(value_type, {}), "lhs_value");
  HloInstruction* rhs = b.Parameter(1, Shape::Array(value_type, {}), "rhs_value");
  HloInstruction* lhs_index = b.Parameter(2, Shape::Array(index_type, {}), "lhs_index");
  HloInstruction* rhs_index = b.Parameter(3, Shape::Array(index_type, {}), "rhs_index");
  HloInstruction* better =
      b.Compare(lhs, rhs, largest ? ComparisonDirection::kGt : ComparisonDirection::kLt);
  HloInstruction* equal = b.Compare(lhs, rhs, ComparisonDirection::kEq);
  if (IsFloatingPointType(value_type)) {
    better->SetComparisonOrder(ComparisonOrder::kTotal);
    equal->SetComparisonOrder(ComparisonOrder::kTotal);
  }
  HloInstruction* earlier = b.Compare(lhs_index, rhs_index, ComparisonDirection::kLt);
  HloInstruction* tie = b.Binary(HloOpcode::kAnd, equal, earlier);
  order->set_root(b.Binary(HloOpcode::kOr, better, tie));
  return order;
}

HloInstruction* TopKInit(HloBuilder& b, const HloInstruction& topk) {
  const Shape& values = topk.shape().tuple_shape(0);
  const Shape& indices = topk.shape().tuple_shape(1);
  HloInstruction* worst = WorstValue(b, values.element_type(), Largest(topk));
  // Past every real index: a real element equal to the worst value wins.
  HloInstruction* past = b.ConstantIndex(std::numeric_limits<int32_t>::max(), indices.element_type());
  return b.Tuple({b.Broadcast(worst, values.dims(), {}), b.Broadcast(past, indices.dims(), {})});
}

HloInstruction* ArgReduceInit(HloBuilder& b, const HloInstruction& reduce) {
  const Shape& values = reduce.shape().tuple_shape(0);
  const Shape& indices = reduce.shape().tuple_shape(1);
  return b.Tuple({b.Broadcast(reduce.operand(2), values.dims(), {}),
                  b.Broadcast(reduce.operand(3), indices.dims(), {})});
}

// so_far and chunk side by side along the last dimension, sorted by the
// pair order, the first k kept.
HloInstruction* MergeTopK(HloBuilder& b, const HloInstruction& topk, HloInstruction* so_far,
                          HloInstruction* chunk) {
  const int64_t last = topk.shape().tuple_shape(0).rank() - 1;
  std::vector<HloInstruction*> both;
  for (int64_t i = 0; i < 2; ++i) {
    both.push_back(b.Concatenate({b.GetTupleElement(so_far, i), b.GetTupleElement(chunk, i)}, last));
  }
  HloComputation* body = b.computation();
  const PrimitiveType value_type = both[0]->shape().element_type();
  HloComputation* order = PairOrder(body->parent(), body, value_type,
                                    both[1]->shape().element_type(), Largest(topk));
  HloInstruction* sorted = body->Add(HloOpcode::kSort,
                                     Shape::Tuple({both[0]->shape(), both[1]->shape()}), both, "merge");
  sorted->SetIntListAttribute("dimensions", {last});
  sorted->SetCalledComputation("to_apply", order);
  std::vector<HloInstruction*> best;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* all = b.GetTupleElement(sorted, i);
    std::vector<int64_t> limits = all->shape().dims();
    limits[last] = TopKSize(topk);
    best.push_back(b.Slice(all, std::vector<int64_t>(limits.size(), 0), limits));
  }
  return b.Tuple(best);
}

// The reducer applied to the two pairs: each side reshaped to a trailing
// dimension of 1, the two concatenated and reduced over it, so_far first.
HloInstruction* MergeArgReduce(HloBuilder& b, const HloInstruction& reduce, HloInstruction* clone,
                               HloInstruction* so_far, HloInstruction* chunk) {
  std::vector<HloInstruction*> pairs;
  int64_t rank = 0;
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& part = reduce.shape().tuple_shape(static_cast<int>(i));
    rank = part.rank();
    std::vector<int64_t> column = part.dims();
    column.push_back(1);
    pairs.push_back(b.Concatenate({b.Reshape(b.GetTupleElement(so_far, i), column),
                                   b.Reshape(b.GetTupleElement(chunk, i), column)},
                                  rank));
  }
  // The init values as the loop body has them (its clone's operands).
  HloInstruction* merged = b.computation()->Add(
      HloOpcode::kReduce, reduce.shape(), {pairs[0], pairs[1], clone->operand(2), clone->operand(3)},
      "merge");
  merged->SetIntListAttribute("dimensions", {rank});
  merged->SetCalledComputation("to_apply", reduce.CalledComputation("to_apply"));
  return merged;
}

}  // namespace

Shape SelectionChunkShape(const HloInstruction& selection, int64_t chunk) {
  if (!IsTopK(selection) || chunk >= TopKSize(selection)) return selection.shape();
  std::vector<Shape> parts = selection.shape().tuple_shapes();
  for (Shape& part : parts) part.set_dim(part.rank() - 1, chunk);
  return Shape::Tuple(std::move(parts));
}

HloInstruction* InitialCandidates(HloBuilder& b, const HloInstruction& selection) {
  return IsTopK(selection) ? TopKInit(b, selection) : ArgReduceInit(b, selection);
}

HloInstruction* ChunkCandidates(HloBuilder& b, HloInstruction* clone, HloInstruction* offset) {
  if (!IsTopK(*clone)) return clone;
  const int64_t chunk = clone->operand(0)->shape().dims().back();
  const int64_t k = std::min(TopKSize(*clone), chunk);
  clone->SetIntAttribute("k", k);
  HloInstruction* positions = b.GetTupleElement(clone, 1);
  HloInstruction* start = offset;
  const PrimitiveType index_type = positions->shape().element_type();
  if (start->shape().element_type() != index_type) start = b.Convert(start, index_type);
  HloInstruction* global =
      b.Binary(HloOpcode::kAdd, positions, b.Broadcast(start, positions->shape().dims(), {}));
  return b.Tuple({b.GetTupleElement(clone, 0), global});
}

HloInstruction* MergeCandidates(HloBuilder& b, const HloInstruction& selection,
                                HloInstruction* chunk_clone, HloInstruction* so_far,
                                HloInstruction* chunk) {
  return IsTopK(selection) ? MergeTopK(b, selection, so_far, chunk)
                           : MergeArgReduce(b, selection, chunk_clone, so_far, chunk);
}

}  // namespace exla
