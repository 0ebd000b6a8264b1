#include "passes/tensor_splitter/reduction_merge.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/module.h"
#include "ir/pattern_matcher.h"
#include "passes/tensor_splitter/dimension_map.h"
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

// The max over `dim` of `logits`, with init -inf, read through value-preserving
// converts, reshapes and transposes (TensorFlow's reduce_logsumexp takes the
// maximum of an f32 -> f32 convert of the logits it then shifts).
HloInstruction* FindMax(HloInstruction* logits, int64_t dim) {
  HloInstruction* base = logits;
  while (m::IsNoOp(base)) base = base->operand(0);
  std::vector<HloInstruction*> same = {base};
  for (size_t i = 0; i < same.size(); ++i) {
    for (HloInstruction* user : same[i]->users()) {
      if (m::IsNoOp(user) && std::find(same.begin(), same.end(), user) == same.end()) {
        same.push_back(user);
      } else if (user->operand(0) == same[i] &&
                 IsReduceOver(user, dim, HloOpcode::kMaximum, "-inf")) {
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
  found->max = FindMax(found->logits, found->dim);
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
  WhyNot built = BuildSplitRegion({RegionStart::Sink(found->max, 0, found->dim)}, threshold,
                                  threshold, &found->region, sharding);
  if (!built.ok()) return built;
  // The maximum's operand: x, or x behind value-preserving steps.
  auto member = found->region.members.find(found->max->operand(0));
  if (member == found->region.members.end() ||
      member->second.result_dim != DimensionMapping::Dimension(found->dim) ||
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

Shape SliceShape(const Shape& shape, int64_t dim, int64_t chunk) {
  Shape sliced = shape;
  sliced.set_dim(static_cast<int>(dim), chunk);
  return sliced;
}

// Builds the loops: state (index, M, S, inputs...).
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
        b.Broadcast(b.ConstantScalar(max_type, -inf), s_.max->shape().dims(), {}),
        b.Broadcast(b.ConstantScalar(sum_type, 0), s_.sum->shape().dims(), {})};
    for (const auto& input : region_.inputs) elements.push_back(input.first);
    return b.Tuple(elements);
  }

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
    Merge(b, b.GetTupleElement(state, 1), b.GetTupleElement(state, 2), clones.at(s_.max),
          clones.at(s_.max->operand(0)), &next[1], &next[2]);
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
  void Merge(HloBuilder& b, HloInstruction* running_max, HloInstruction* running_sum,
             HloInstruction* chunk_max, HloInstruction* chunk, HloInstruction** next_max,
             HloInstruction** next_sum) {
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
    if (sum_type != type) scale = b.Convert(scale, sum_type);
    *next_max = new_max;
    *next_sum = b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, running_sum, scale),
                         chunk_sum);
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

std::vector<HloComputation*> RewriteSoftmaxStatistics(const SoftmaxStatistics& statistics,
                                                      int64_t chunk) {
  StatisticsLoopBuilder loops(statistics);
  HloInstruction* result = LoopsOverChunks(loops, statistics.region.size, chunk);
  HloComputation* computation = statistics.sum->parent();
  HloBuilder b(computation);
  HloInstruction* max = b.GetTupleElement(result, 1);
  HloInstruction* sum = b.GetTupleElement(result, 2);
  statistics.max->ReplaceAllUsesWith(max);
  // The loop summed exp(x - M); the program sums exp(x - c), with c computed
  // from the maximum (now the loop's): exp(M - c) is 1 where c is M, and
  // exp(-inf - -inf) = NaN for a row of -inf, as in the program's own sum.
  HloInstruction* shift = statistics.shift == statistics.max ? max : statistics.shift;
  HloInstruction* factor = b.Unary(HloOpcode::kExp, b.Binary(HloOpcode::kSubtract, max, shift));
  const PrimitiveType sum_type = statistics.sum->shape().element_type();
  if (factor->shape().element_type() != sum_type) factor = b.Convert(factor, sum_type);
  statistics.sum->ReplaceAllUsesWith(b.Binary(HloOpcode::kMultiply, sum, factor));
  return loops.bodies();
}

}  // namespace exla
