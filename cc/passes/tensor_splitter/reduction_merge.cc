#include "passes/tensor_splitter/reduction_merge.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_set>

#include "analysis/dimension_map.h"
#include "ir/builder.h"
#include "ir/module.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/loops.h"

namespace exla {
namespace {

// A rank-0 constant printed as `literal`, behind value-preserving converts.
// "0" also accepts -0, the identity of a floating-point sum that
// TensorFlow's softmax starts from.
bool IsScalarConstant(const HloInstruction* instruction, const std::string& literal) {
  while (instruction->Is(HloOpcode::kConvert)) instruction = instruction->operand(0);
  if (!instruction->Is(HloOpcode::kConstant) || !instruction->shape().IsArray() ||
      instruction->shape().rank() != 0) {
    return false;
  }
  return instruction->payload() == literal || (literal == "0" && instruction->payload() == "-0");
}

// A reduce of one array over the single dimension `dim` whose partial results
// combine with `opcode` (AccumulationOpcode) and whose init is `init`.
bool IsReduceOver(const HloInstruction* reduce, int64_t dim, HloOpcode opcode, const char* init) {
  if (!reduce->Is(HloOpcode::kReduce) || reduce->operand_count() != 2) return false;
  if (reduce->dimensions() != std::vector<int64_t>{dim}) return false;
  std::optional<HloOpcode> accumulate = AccumulationOpcode(*reduce);
  return accumulate == opcode && IsScalarConstant(reduce->operand(1), init);
}

// Whether `shift` is computed from `max` and constants alone (jax.nn's
// `where(isfinite(m), m, 0)`, TensorFlow's plain m): its value after the loop
// then follows from the loop's maximum.
bool ComputedFromMax(HloInstruction* shift, const HloInstruction* max) {
  std::vector<HloInstruction*> stack = {shift};
  std::unordered_set<HloInstruction*> seen;
  bool reaches_max = false;
  while (!stack.empty()) {
    HloInstruction* value = stack.back();
    stack.pop_back();
    if (!seen.insert(value).second) continue;
    if (value == max) {
      reaches_max = true;
      continue;
    }
    if (value->Is(HloOpcode::kConstant)) continue;
    if (value->operand_count() == 0 || value->HasSideEffectNoRecurse() ||
        !value->called_computations().empty()) {
      return false;
    }
    for (HloInstruction* operand : value->operands()) stack.push_back(operand);
  }
  return reaches_max;
}

std::vector<int64_t> DimsWithout(const std::vector<int64_t>& dims, int64_t dim) {
  std::vector<int64_t> kept;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int64_t>(d) != dim) kept.push_back(dims[d]);
  }
  return kept;
}

// Result dimensions of x other than `dim`: where a per-row value broadcasts to.
std::vector<int64_t> OtherDims(int64_t rank, int64_t dim) {
  std::vector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) others.push_back(d);
  }
  return others;
}

// Whether the logits' values are those of `h` in the same places: behind
// value-preserving converts, reshapes and transposes, and reshapes that add
// or drop dimensions of extent 1.
bool SameValues(const HloInstruction* h) { return m::IsNoOp(h) || m::IsDegenerateReshape(h); }

// Dimension `dim` of `from` (of extent above 1) in `to`, a shape with the
// same dimensions of extent above 1 in the same order.
int64_t DimAcross(const Shape& from, int64_t dim, const Shape& to) {
  int64_t rank_among_others = 0;
  for (int64_t d = 0; d < dim; ++d) rank_among_others += from.dim(static_cast<int>(d)) != 1;
  for (int64_t d = 0; d < to.rank(); ++d) {
    if (to.dim(static_cast<int>(d)) != 1 && rank_among_others-- == 0) return d;
  }
  return -1;
}

// The max over `dim` of `logits`, with init -inf, read through SameValues
// (TensorFlow's reduce_logsumexp takes the maximum of an f32 -> f32 convert
// of the logits it then shifts; JAX's attention takes it before a reshape
// that moves a dimension of extent 1). `*max_dim` is the dimension it
// reduces.
HloInstruction* FindMax(HloInstruction* logits, int64_t dim, int64_t* max_dim) {
  HloInstruction* base = logits;
  int64_t base_dim = dim;
  while (SameValues(base)) {
    base_dim = DimAcross(base->shape(), base_dim, base->operand(0)->shape());
    base = base->operand(0);
  }
  std::vector<std::pair<HloInstruction*, int64_t>> same = {{base, base_dim}};
  for (size_t i = 0; i < same.size(); ++i) {
    const auto [value, value_dim] = same[i];
    for (HloInstruction* user : value->users()) {
      const bool seen = std::any_of(same.begin(), same.end(),
                                    [&](const auto& entry) { return entry.first == user; });
      if (SameValues(user) && !seen) {
        same.push_back({user, DimAcross(value->shape(), value_dim, user->shape())});
      } else if (user->operand(0) == value &&
                 IsReduceOver(user, value_dim, HloOpcode::kMaximum, "-inf")) {
        *max_dim = value_dim;
        return user;
      }
    }
  }
  return nullptr;
}

}  // namespace

namespace {

// The shapes: m = max over `dim` of x, s = sum over `dim` of exp(x - c) for c
// computed from m, one value per row of x.
WhyNot MatchStatistics(HloInstruction* sum, SoftmaxStatistics* found) {
  if (!sum->Is(HloOpcode::kReduce) || sum->dimensions().size() != 1) {
    return WhyNot::Because(sum->name() + " is not a reduce over one dimension");
  }
  found->sum = sum;
  found->dim = sum->dimensions()[0];
  HloInstruction* broadcast = nullptr;
  if (!IsReduceOver(sum, found->dim, HloOpcode::kAdd, "0") ||
      !Match(sum->operand(0),
             m::NoOps(m::Exp(m::Subtract(m::Op(&found->logits),
                                         m::Broadcast(m::Op(&found->shift)).Bind(&broadcast))),
                      &found->between))) {
    return WhyNot::Because(sum->name() + " is not a sum of exp(x - broadcast(c))");
  }
  const Shape& shape = found->logits->shape();
  if (!shape.IsArray() || !IsFloatingPointType(shape.element_type())) {
    return WhyNot::Because(found->logits->name() + " is not a floating-point array");
  }
  if (broadcast->dimensions() != OtherDims(shape.rank(), found->dim) ||
      !found->shift->shape().IsArray() ||
      found->shift->shape().dims() != DimsWithout(shape.dims(), found->dim)) {
    return WhyNot::Because(broadcast->name() + " does not broadcast a value per row along the "
                           "reduced dimension");
  }
  if (shape.dim(static_cast<int>(found->dim)) < 2) {
    return WhyNot::Because(sum->name() + " sums over one element");
  }
  found->max = FindMax(found->logits, found->dim, &found->max_dim);
  if (found->max == nullptr || found->max->shape().element_type() != shape.element_type() ||
      found->max->operand(0)->shape().element_type() != shape.element_type() ||
      !ComputedFromMax(found->shift, found->max)) {
    return WhyNot::Because(sum->name() + " subtracts no maximum of " + found->logits->name() +
                           " over the dimension it sums");
  }
  return WhyNot::Ok();
}

// The loop that yields the maximum from slices of x along the dimension,
// and whether it is worth building.
WhyNot BuildStatisticsRegion(int64_t threshold, int64_t split_size,
                             const ShardingAnalysis& sharding, SoftmaxStatistics* found) {
  HloInstruction* x = found->logits;
  if (sharding.active()) return WhyNot::Because("sharded programs keep the split of rows");
  if (sharding.BytesToSplit(*x) <= threshold) {
    return WhyNot::Because(x->name() + " is not above the threshold, or is kept whole");
  }
  WhyNot built = BuildSplitRegion({RegionStart::Sink(found->max, 0, found->max_dim)}, threshold,
                                  threshold, &found->region, sharding);
  if (!built.ok()) return built;
  // The maximum's operand: x, or x behind value-preserving steps.
  auto member = found->region.members.find(found->max->operand(0));
  if (member == found->region.members.end() ||
      member->second.result_dim != DimensionMapping::Dimension(found->max_dim) ||
      found->region.exits != std::vector<HloInstruction*>{found->max} || found->region.size < 2) {
    return WhyNot::Because(x->name() + " cannot be computed slice by slice along dimension " +
                           std::to_string(found->dim));
  }
  // Only worth it where a loop over rows would read a large input whole.
  const auto& inputs = found->region.inputs;
  if (std::none_of(inputs.begin(), inputs.end(), [&](const auto& input) {
        return input.second.is_dimension() && input.first->shape().ByteSize() > split_size;
      })) {
    return WhyNot::Because(x->name() + " reads no input larger than the split size along "
                           "dimension " + std::to_string(found->dim));
  }
  return WhyNot::Ok();
}

}  // namespace

WhyNot FindSoftmaxStatistics(HloInstruction* sum, int64_t threshold, int64_t split_size,
                             const ShardingAnalysis& sharding, SoftmaxStatistics* statistics) {
  SoftmaxStatistics found;
  WhyNot why = MatchStatistics(sum, &found);
  if (why.ok()) why = BuildStatisticsRegion(threshold, split_size, sharding, &found);
  if (why.ok()) *statistics = std::move(found);
  return why;
}

namespace {

HloInstruction* ConvertTo(HloBuilder& b, HloInstruction* h, PrimitiveType type) {
  return h->shape().element_type() == type ? h : b.Convert(h, type);
}

// `h` with the dimensions of `shape` (a reshape of unit dimensions).
HloInstruction* ReshapedTo(HloBuilder& b, HloInstruction* h, const Shape& shape) {
  return h->shape().dims() == shape.dims() ? h : b.Reshape(h, shape.dims());
}

// A per-row value (x's dimensions but the normalised one) broadcast onto
// the weighted sum's result, where the dot put those rows: transposed first
// where the dot's order of them differs (a broadcast keeps its operand's).
HloInstruction* RowsOnto(HloBuilder& b, HloInstruction* rows, const WeightedSum& w, int64_t dim,
                         PrimitiveType type) {
  std::vector<std::pair<int64_t, int64_t>> placed;  // (result dimension, row dimension)
  for (int64_t d = 0, row = 0; d <= rows->shape().rank(); ++d) {
    if (d == dim) continue;
    placed.push_back({ResultDimension(*w.dot, w.weights_operand, d).dimension(), row++});
  }
  std::sort(placed.begin(), placed.end());
  std::vector<int64_t> order;
  std::vector<int64_t> positions;
  for (const auto& [position, row] : placed) {
    positions.push_back(position);
    order.push_back(row);
  }
  if (!std::is_sorted(order.begin(), order.end())) rows = b.Transpose(rows, order);
  return b.Broadcast(ConvertTo(b, rows, type), w.dot->shape().dims(), positions);
}

// Builds the loops: state (index, M, S, inputs..., the values each weighted
// sum weighs..., their accumulators...).
class StatisticsLoopBuilder {
 public:
  StatisticsLoopBuilder(const SoftmaxStatistics& statistics)
      : s_(statistics),
        region_(statistics.region),
        computation_(statistics.sum->parent()),
        module_(computation_->parent()),
        index_type_(region_.size > std::numeric_limits<int32_t>::max() ? PrimitiveType::kS64
                                                                       : PrimitiveType::kS32) {
    for (HloInstruction* instruction : computation_->MakeInstructionPostOrder()) {
      if (region_.Contains(instruction)) members_in_order_.push_back(instruction);
    }
  }

  HloInstruction* InitialState() {
    HloBuilder b(computation_);
    const PrimitiveType max_type = s_.max->shape().element_type();
    const PrimitiveType sum_type = s_.sum->shape().element_type();
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<HloInstruction*> elements = {
        b.ConstantIndex(0, index_type_),
        b.Broadcast(b.ConstantScalar(max_type, -inf), s_.sum->shape().dims(), {}),
        b.Broadcast(b.ConstantScalar(sum_type, 0), s_.sum->shape().dims(), {})};
    for (const auto& input : region_.inputs) elements.push_back(input.first);
    for (const WeightedSum& w : s_.weighted_sums) {
      elements.push_back(w.dot->operand(1 - w.weights_operand));
    }
    for (const WeightedSum& w : s_.weighted_sums) {
      const PrimitiveType type = AccumulatorType(s_, w);
      elements.push_back(b.Broadcast(b.ConstantScalar(type, 0), w.dot->shape().dims(), {}));
    }
    return b.Tuple(elements);
  }

  // Where the loop state holds the values the i-th weighted sum weighs, and
  // its accumulator.
  int64_t ValuesIndex(size_t i) const {
    return static_cast<int64_t>(3 + region_.inputs.size() + i);
  }
  int64_t AccumulatorIndex(size_t i) const { return ValuesIndex(s_.weighted_sums.size() + i); }

  // One while loop over `trips` chunks of `chunk`, starting at `base`.
  HloInstruction* Loop(HloInstruction* state, int64_t chunk, int64_t trips, int64_t base) {
    HloBuilder b(computation_);
    if (state->Is(HloOpcode::kWhile)) {  // a loop after another restarts its index
      std::vector<HloInstruction*> elements = {b.ConstantIndex(0, index_type_)};
      for (size_t i = 1; i < state->shape().tuple_shapes().size(); ++i) {
        elements.push_back(b.GetTupleElement(state, static_cast<int64_t>(i)));
      }
      state = b.Tuple(elements);
    }
    HloComputation* condition = NewComputation(s_.sum->name() + ".merge_cond");
    HloBuilder c(condition);
    HloInstruction* index = c.GetTupleElement(c.Parameter(0, state->shape(), "state"), 0);
    condition->set_root(
        c.Compare(index, c.ConstantIndex(trips, index_type_), ComparisonDirection::kLt));
    return b.While(state, condition, MakeBody(state->shape(), chunk, base));
  }

  std::vector<HloComputation*> bodies() const { return bodies_; }

 private:
  HloComputation* NewComputation(const std::string& hint) {
    auto computation = std::make_unique<HloComputation>(module_->UniqueName(hint));
    return module_->AddComputationBefore(std::move(computation), computation_);
  }

  HloComputation* MakeBody(const Shape& state_shape, int64_t chunk, int64_t base) {
    HloComputation* body = NewComputation(s_.sum->name() + ".merge_body");
    bodies_.push_back(body);
    HloBuilder b(body);
    HloInstruction* state = b.Parameter(0, state_shape, "state");
    HloInstruction* index = b.GetTupleElement(state, 0);
    HloInstruction* offset =
        b.Binary(HloOpcode::kMultiply, index, b.ConstantIndex(chunk, index_type_));
    if (base != 0) offset = b.Binary(HloOpcode::kAdd, offset, b.ConstantIndex(base, index_type_));
    std::vector<HloInstruction*> next = {
        b.Binary(HloOpcode::kAdd, index, b.ConstantIndex(1, index_type_)), nullptr, nullptr};
    std::map<std::pair<HloInstruction*, DimensionMapping>, HloInstruction*> inputs;
    for (size_t i = 0; i < region_.inputs.size(); ++i) {
      const auto& [instruction, dim] = region_.inputs[i];
      HloInstruction* whole = b.GetTupleElement(state, static_cast<int64_t>(3 + i));
      next.push_back(whole);
      inputs[region_.inputs[i]] = dim.is_used_whole() ? whole : SliceOf(b, whole, dim, offset, chunk);
    }
    for (HloInstruction* constant : region_.constants) {
      HloInstruction* copy = body->Add(HloOpcode::kConstant, constant->shape(), {}, constant->name());
      copy->set_payload(constant->payload());
      inputs[{constant, DimensionMapping::UsedWhole()}] = copy;
    }
    std::unordered_map<HloInstruction*, HloInstruction*> clones =
        CloneMembers(body, inputs, offset, chunk);
    // The maximum's operand is x, or x behind reshapes of unit dimensions:
    // the merge works on x's slice and rows.
    const Shape slice = SliceShape(s_.logits->shape(), s_.dim, chunk);
    const Merged merged = Merge(b, b.GetTupleElement(state, 1), b.GetTupleElement(state, 2),
                                ReshapedTo(b, clones.at(s_.max), s_.sum->shape()),
                                ReshapedTo(b, clones.at(s_.max->operand(0)), slice));
    next[1] = merged.max;
    next[2] = merged.sum;
    const size_t first_values = next.size();
    for (size_t i = 0; i < s_.weighted_sums.size(); ++i) {
      next.push_back(b.GetTupleElement(state, ValuesIndex(i)));
    }
    for (size_t i = 0; i < s_.weighted_sums.size(); ++i) {
      HloInstruction* accumulator = b.GetTupleElement(state, AccumulatorIndex(i));
      next.push_back(MergeWeightedSum(b, s_.weighted_sums[i], accumulator, next[first_values + i],
                                      merged, offset, chunk));
    }
    body->set_root(b.Tuple(next));
    return body;
  }

  HloInstruction* SliceOf(HloBuilder& b, HloInstruction* whole, DimensionMapping dim,
                          HloInstruction* offset, int64_t chunk) {
    HloInstruction* zero = b.ConstantIndex(0, index_type_);
    std::vector<HloInstruction*> starts(whole->shape().rank(), zero);
    starts[dim.dimension()] = offset;
    std::vector<int64_t> sizes = whole->shape().dims();
    sizes[dim.dimension()] = chunk;
    return b.DynamicSlice(whole, starts, sizes);
  }

  // The region's members on this trip's slice: x's chunk and its maximum.
  std::unordered_map<HloInstruction*, HloInstruction*> CloneMembers(
      HloComputation* body,
      const std::map<std::pair<HloInstruction*, DimensionMapping>, HloInstruction*>& inputs,
      HloInstruction* offset, int64_t chunk) {
    HloBuilder b(body);
    std::unordered_map<HloInstruction*, HloInstruction*> clones;
    for (HloInstruction* original : members_in_order_) {
      const RegionMember& member = region_.members.at(original);
      const bool sliced = member.result_dim.is_dimension();
      Shape shape = sliced ? SliceShape(original->shape(), member.result_dim.dimension(), chunk)
                           : original->shape();
      std::vector<HloInstruction*> operands;
      for (int k = 0; k < original->operand_count(); ++k) {
        HloInstruction* operand = original->operand(k);
        auto clone = clones.find(operand);
        operands.push_back(clone != clones.end() ? clone->second
                                                 : inputs.at({operand, member.operand_dims[k]}));
      }
      HloInstruction* clone = body->Add(original->opcode(), shape, operands, original->name());
      clone->set_payload(original->payload());
      *clone->mutable_attributes() = original->attributes();
      if (sliced && original->Is(HloOpcode::kSlice)) {
        std::vector<SliceBounds> bounds = original->slice();
        bounds[member.result_dim.dimension()].limit = chunk;
        clone->SetSlice(bounds);
      }
      if (sliced && original->Is(HloOpcode::kIota) &&
          original->IntAttribute("iota_dimension") == member.result_dim.dimension()) {
        // A slice of an iota along its own dimension starts at the offset.
        HloInstruction* start = offset;
        if (shape.element_type() != index_type_) start = b.Convert(start, shape.element_type());
        clone = b.Binary(HloOpcode::kAdd, clone, b.Broadcast(start, shape.dims(), {}));
      }
      clones[original] = clone;
    }
    return clones;
  }

  // The online merge of one slice into (M, S). Why it keeps the program's
  // accuracy: M' is the maximum of every element seen so far, so each
  // argument of exp below is <= 0 and the rescale factor exp(M - M') is in
  // (0, 1]: nothing overflows, whatever the logits' magnitude (the reason a
  // softmax subtracts its maximum in the first place). An element's
  // contribution ends up as exp(x - M_k) times the factors of the later
  // slices, exp(M_k - M_k+1) ... exp(M_j-1 - M_final), each with the relative
  // error of one exp of a rounded difference; the differences telescope to
  // M_k - M_final, so the product carries a few ulps more than the
  // program's exp(x - m), not an error that grows with the logits. The
  // terms are positive, so adding the slices' sums has no cancellation: its
  // relative error is bounded by the number of slices times the unit
  // roundoff, far fewer additions than the program's own sum over the row.
  // A row whose maximum is still -inf (every element so far -inf, masked)
  // shifts by 0 instead, so that exp(-inf - -inf) makes no NaN that later
  // slices would keep; its sum stays 0.
  struct Merged {
    HloInstruction* max;    // M'
    HloInstruction* sum;    // S'
    HloInstruction* terms;  // exp(x_k - M'), as the program's sum reads its terms
    HloInstruction* scale;  // exp(M - M'), per row, in the maximum's type
  };

  Merged Merge(HloBuilder& b, HloInstruction* running_max, HloInstruction* running_sum,
               HloInstruction* chunk_max, HloInstruction* chunk) {
    const std::vector<int64_t>& rows = running_max->shape().dims();
    const PrimitiveType type = running_max->shape().element_type();
    const PrimitiveType sum_type = running_sum->shape().element_type();
    HloInstruction* new_max = b.Binary(HloOpcode::kMaximum, running_max, chunk_max);
    HloInstruction* neg_inf = b.Broadcast(
        b.ConstantScalar(type, -std::numeric_limits<double>::infinity()), rows, {});
    HloInstruction* zero = b.Broadcast(b.ConstantScalar(type, 0), rows, {});
    HloInstruction* shift =
        b.Select(b.Compare(new_max, neg_inf, ComparisonDirection::kEq), zero, new_max);
    HloInstruction* shifted = b.Binary(
        HloOpcode::kSubtract, chunk,
        b.Broadcast(shift, chunk->shape().dims(), OtherDims(chunk->shape().rank(), s_.dim)));
    HloInstruction* terms = b.Unary(HloOpcode::kExp, shifted);
    // The program's own steps between its exp and its sum, innermost first.
    for (auto it = s_.between.rbegin(); it != s_.between.rend(); ++it) {
      Shape step = terms->shape();
      step.set_element_type((*it)->shape().element_type());
      HloInstruction* clone = b.computation()->Add((*it)->opcode(), step, {terms}, (*it)->name());
      *clone->mutable_attributes() = (*it)->attributes();
      terms = clone;
    }
    HloInstruction* chunk_sum = b.Reduce(terms, b.ConstantScalar(sum_type, 0), {s_.dim},
                                         s_.sum->CalledComputation("to_apply"));
    HloInstruction* scale =
        b.Unary(HloOpcode::kExp, b.Binary(HloOpcode::kSubtract, running_max, shift));
    HloInstruction* next_sum = b.Binary(
        HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, running_sum, ConvertTo(b, scale, sum_type)),
        chunk_sum);
    return {new_max, next_sum, terms, scale};
  }

  // One slice merged into a weighted sum's accumulator A (WeightedSum):
  // A' = A · exp(M - M') + dot(exp(x_k - M'), v_k), in the accumulator's
  // type, the values sliced along the dimension the dot contracts.
  HloInstruction* MergeWeightedSum(HloBuilder& b, const WeightedSum& w, HloInstruction* accumulator,
                                   HloInstruction* values, const Merged& merged,
                                   HloInstruction* offset, int64_t chunk) {
    const PrimitiveType type = accumulator->shape().element_type();
    HloInstruction* slice = ConvertTo(
        b, SliceOf(b, values, DimensionMapping::Dimension(w.values_dim), offset, chunk), type);
    HloInstruction* weights = ConvertTo(b, merged.terms, type);
    HloInstruction* contribution =
        w.weights_operand == 0 ? b.Dot(weights, slice, w.dot->dot_dimensions(), type)
                               : b.Dot(slice, weights, w.dot->dot_dimensions(), type);
    HloInstruction* rescaled = b.Binary(HloOpcode::kMultiply, accumulator,
                                        RowsOnto(b, merged.scale, w, s_.dim, type));
    return b.Binary(HloOpcode::kAdd, rescaled, contribution);
  }

  const SoftmaxStatistics& s_;
  const SplitRegion& region_;
  HloComputation* computation_;
  HloModule* module_;
  const PrimitiveType index_type_;
  std::vector<HloInstruction*> members_in_order_;
  std::vector<HloComputation*> bodies_;
};

}  // namespace

PrimitiveType AccumulatorType(const SoftmaxStatistics& statistics, const WeightedSum& sum) {
  const PrimitiveType own = statistics.sum->shape().element_type();
  const PrimitiveType dot = sum.dot->shape().element_type();
  return FloatRung(dot) > FloatRung(own) ? dot : own;
}

int64_t ValuesBytesPerUnit(const SoftmaxStatistics& statistics, const WeightedSum& sum) {
  const Shape& values = sum.dot->operand(1 - sum.weights_operand)->shape();
  const int64_t extent = std::max<int64_t>(1, values.dim(static_cast<int>(sum.values_dim)));
  const int64_t bytes = PrimitiveTypeBitWidth(AccumulatorType(statistics, sum)) / 8;
  return values.ElementCount() / extent * bytes;
}

std::vector<HloComputation*> RewriteSoftmaxStatistics(const SoftmaxStatistics& statistics,
                                                      int64_t chunk) {
  StatisticsLoopBuilder loops(statistics);
  HloInstruction* result = LoopsOverChunks(loops, statistics.region.size, chunk);
  HloComputation* computation = statistics.sum->parent();
  HloBuilder b(computation);
  HloInstruction* max = b.GetTupleElement(result, 1);
  HloInstruction* sum = b.GetTupleElement(result, 2);
  statistics.max->ReplaceAllUsesWith(ReshapedTo(b, max, statistics.max->shape()));
  // The loop summed exp(x - M); the program sums exp(x - c), with c computed
  // from the maximum (now the loop's): exp(M - c) is 1 where c is M, and
  // exp(-inf - -inf) = NaN for a row of -inf, as in the program's own sum.
  HloInstruction* shift = statistics.shift == statistics.max ? max : statistics.shift;
  HloInstruction* factor = b.Unary(HloOpcode::kExp, b.Binary(HloOpcode::kSubtract, max, shift));
  const PrimitiveType sum_type = statistics.sum->shape().element_type();
  if (factor->shape().element_type() != sum_type) factor = b.Convert(factor, sum_type);
  HloInstruction* program_sum = b.Binary(HloOpcode::kMultiply, sum, factor);
  statistics.sum->ReplaceAllUsesWith(program_sum);
  // A weighted sum: the loop summed exp(x - M) v, the program exp(x - c) v
  // (divided by its sum where it normalised first). The factor is exactly 1
  // where the program's arithmetic is finite.
  for (size_t i = 0; i < statistics.weighted_sums.size(); ++i) {
    const WeightedSum& w = statistics.weighted_sums[i];
    HloInstruction* value = b.GetTupleElement(result, loops.AccumulatorIndex(i));
    const PrimitiveType type = value->shape().element_type();
    value = b.Binary(HloOpcode::kMultiply, value, RowsOnto(b, factor, w, statistics.dim, type));
    if (w.normalised) {
      HloInstruction* divisor = RowsOnto(b, program_sum, w, statistics.dim, type);
      value = b.Binary(HloOpcode::kDivide, value, divisor);
    }
    w.dot->ReplaceAllUsesWith(ConvertTo(b, value, w.dot->shape().element_type()));
  }
  return loops.bodies();
}

}  // namespace exla
