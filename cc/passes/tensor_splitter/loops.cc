// Rewriting a split region as loops: the `while` loops over chunks of the
// split dimension that replace the region (cc/passes/tensor_splitter/region.h says how
// a region is found). Inputs are dynamic-sliced in the body, sums over the
// split dimension accumulate in the loop state, other results are written
// slice by slice with dynamic-update-slice.
#include "passes/tensor_splitter/loops.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/builder.h"
#include "ir/module.h"
#include "passes/tensor_splitter/topk_merge.h"

namespace exla {
namespace {

// The name of a main loop's body (a first trip's is ".split_first_body"):
// how PreviousLoop tells the splitter's loops from the program's own.
constexpr char kBodySuffix[] = ".split_body";

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The splitter's loop that ends last in `computation`'s order, if any.
HloInstruction* PreviousLoop(const HloComputation& computation) {
  HloInstruction* last = nullptr;
  for (HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    if (instruction->Is(HloOpcode::kWhile) &&
        EndsWith(instruction->CalledComputation("body")->name(), kBodySuffix)) {
      last = instruction;
    }
  }
  return last;
}

// The loop the region's first trip waits for (see LoopBuilder::WaitFor):
// the splitter's previous loop in the computation, unless the region
// already reads what it computes (ordered already) or it reads what the
// region computes (waiting would be a cycle). Why not, in `why_not`.
HloInstruction* LoopToWaitFor(const SplitRegion& region, std::string* why_not) {
  HloInstruction* previous = PreviousLoop(*region.exits.front()->parent());
  if (previous == nullptr) return nullptr;
  std::vector<const HloInstruction*> members;
  for (const auto& [member, _] : region.members) members.push_back(member);
  if (DependsOn(previous, members)) {
    *why_not = "it computes what loop " + previous->name() + " reads";
    return nullptr;
  }
  for (const auto& [input, _] : region.inputs) {
    if (DependsOn(input, {previous})) return nullptr;  // ordered by its data already
  }
  return previous;
}

std::vector<SliceBounds> SliceBoundsWithChunk(const HloInstruction& slice, int64_t dim, int64_t chunk) {
  std::vector<SliceBounds> bounds = slice.slice();
  bounds[dim].limit = chunk;
  return bounds;
}

class LoopBuilder {
 public:
  LoopBuilder(const SplitRegion& region, HloComputation* computation, int64_t chunk,
              HloInstruction* after)
      : region_(region), computation_(computation), module_(computation->parent()), after_(after) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (region.Contains(instruction)) members_in_order_.push_back(instruction);
    }
    for (size_t e = 0; e < region.exits.size(); ++e) {
      if (!IsCompensatedSum(region.exits[e])) continue;
      compensated_exits_.push_back(e);
      if (std::optional<PartialSum> partial = PartialSumOf(region.exits[e], chunk)) {
        partial_sums_.emplace(e, *partial);
      }
    }
  }

  // The value of exit `e` after the loops, from the loop's result `value`:
  // a partial sum still has the reduce's other dimensions to sum.
  HloInstruction* ExitValue(size_t e, HloInstruction* value) {
    auto partial = partial_sums_.find(e);
    if (partial == partial_sums_.end()) return value;
    HloInstruction* exit = region_.exits[e];
    HloBuilder b(computation_);
    HloInstruction* total = b.Reduce(value, exit->operand(1), partial->second.remaining_dims,
                                     exit->CalledComputation("to_apply"));
    *total->mutable_shape() = exit->shape();
    return total;
  }

  // Initial loop state: (index, one buffer per exit, inputs..., one
  // compensation per compensated sum). The compensations come last so that
  // exits and inputs keep the positions the rest of the pass reads them at.
  // With `peeled`, the state of the first trip (FirstTrip): a peeled sum's
  // buffer is a scalar placeholder that the trip never reads.
  HloInstruction* InitialState(bool peeled = false) {
    HloBuilder b(computation_);
    std::vector<HloInstruction*> elements = {Index(b, 0)};
    for (size_t e = 0; e < region_.exits.size(); ++e) {
      HloInstruction* exit = region_.exits[e];
      const RegionMember& member = region_.members.at(exit);
      const Shape& shape = AccumulatorShape(e);
      HloInstruction* init;
      if (member.merges_selection) {
        elements.push_back(InitialCandidates(b, *exit));
        continue;
      }
      if (peeled && IsPeeledSum(e)) {
        elements.push_back(b.ConstantScalar(shape.element_type(), 0));
        continue;
      }
      if (auto state = region_.written_in_place.find(exit); state != region_.written_in_place.end()) {
        // The state's own buffer, which the trips overwrite slice by slice.
        elements.push_back(region_.inputs[state->second].first);
        continue;
      }
      if (member.result_dim.is_reduced_away() && exit->Is(HloOpcode::kReduce)) {
        init = exit->operand(1);  // checked to be safe to repeat
      } else {
        init = b.ConstantScalar(shape.element_type(), 0);
      }
      elements.push_back(b.Broadcast(init, shape.dims(), {}));
    }
    for (size_t i = 0; i < region_.inputs.size(); ++i) {
      const auto& input = region_.inputs[i];
      if (InPlaceExitOf(i).has_value()) {
        // Read from the exit's buffer instead (SliceInputs): a scalar keeps
        // the input's position in the state.
        elements.push_back(b.ConstantScalar(input.first->shape().element_type(), 0));
        continue;
      }
      const auto& gathered = region_.gathered;
      const bool gather = std::find(gathered.begin(), gathered.end(), input) != gathered.end();
      elements.push_back(gather ? region_.sharding->WholeOnEveryDevice(input.first) : input.first);
    }
    for (size_t e : compensated_exits_) {
      const Shape& shape = AccumulatorShape(e);
      elements.push_back(b.Broadcast(b.ConstantScalar(shape.element_type(), 0), shape.dims(), {}));
    }
    return b.Tuple(elements);
  }

  // Whether the region has a sum that the first trip starts (see FirstTrip).
  bool PeelsFirstTrip() const {
    for (size_t e = 0; e < region_.exits.size(); ++e) {
      if (IsPeeledSum(e)) return true;
    }
    return false;
  }

  // The first `chunk` units computed before the loops, as a call of a body
  // whose peeled sums start from their first part instead of a splat of
  // zeros. The splat reads nothing, so XLA's schedule computes it as soon
  // as the program starts and keeps it live until the loop (an M x M matrix
  // of SGPR's gradient live beside the forward pass); the first part exists
  // only once its inputs do. XLA inlines the call.
  HloInstruction* FirstTrip(int64_t chunk) {
    HloInstruction* state = InitialState(/*peeled=*/true);
    if (HloInstruction* wait = WaitFor()) {
      std::vector<HloInstruction*> elements = state->operands();
      elements.push_back(wait);
      state = HloBuilder(computation_).Tuple(elements);
    }
    HloComputation* body = MakeBody(state->shape(), chunk, /*base=*/0, /*first=*/true);
    HloInstruction* call = computation_->Add(HloOpcode::kCall, body->root()->shape(), {state},
                                             region_.exits.front()->name() + ".split_first");
    call->SetCalledComputation("to_apply", body);
    return call;
  }

  // A start index of 0 that XLA cannot compute before `after_` ends: minus
  // the magnitude of one element of its first result, which is at most 0
  // whatever that element holds (-|INT_MIN| wraps to INT_MIN), and a
  // dynamic-slice clamps a start below 0 to 0. The first trip adds it to its
  // slices' starts, so its slices, and the first parts of the sums it
  // starts, wait for `after_`. XLA's CPU schedule runs ready work first: the
  // first part of the next loop's sum (SGPR: an M x M matrix) would
  // otherwise be computed at the start and live across the previous loop.
  // An opt-barrier cannot say this (XLA's CPU pipeline removes barriers
  // before it schedules, keeping only control dependencies, which StableHLO
  // cannot carry), nor can the loop's final index (newer XLA knows its value).
  // nullptr where nothing is to wait for.
  HloInstruction* WaitFor() {
    if (after_ == nullptr) return nullptr;
    HloBuilder b(computation_);
    const auto& elements = after_->shape().tuple_shapes();
    for (size_t i = 1; i < elements.size(); ++i) {
      const Shape& shape = elements[i];
      if (!shape.IsArray() || shape.IsTuple() ||
          !(IsFloatingPointType(shape.element_type()) || IsIntegralType(shape.element_type()))) {
        continue;
      }
      HloInstruction* value = b.GetTupleElement(after_, static_cast<int64_t>(i));
      if (shape.rank() > 0) {
        value = b.Slice(value, std::vector<int64_t>(shape.rank(), 0),
                        std::vector<int64_t>(shape.rank(), 1));
        value = b.Reshape(value, {});
      }
      value = b.Convert(value, index_type_);
      return b.Unary(HloOpcode::kNegate, b.Unary(HloOpcode::kAbs, value));
    }
    return nullptr;
  }

  // One while loop processing `trips` chunks of `chunk` starting at `base`.
  HloInstruction* Loop(HloInstruction* state, int64_t chunk, int64_t trips, int64_t base) {
    HloComputation* body = MakeBody(state->shape(), chunk, base);
    HloComputation* condition = MakeCondition(state->shape(), trips);
    HloBuilder b(computation_);
    // A loop after another (the main loop after the remainder or the first
    // trip) restarts its index at 0.
    if (state->Is(HloOpcode::kWhile) || state->Is(HloOpcode::kCall)) {
      std::vector<HloInstruction*> elements = {Index(b, 0)};
      for (size_t i = 1; i < state->shape().tuple_shapes().size(); ++i) {
        elements.push_back(b.GetTupleElement(state, static_cast<int64_t>(i)));
      }
      state = b.Tuple(elements);
    }
    return b.While(state, condition, body);
  }

  std::vector<HloComputation*> bodies() const { return bodies_; }

 private:
  // Loop counters, bounds and slice offsets. XLA's own loops count in s32, so
  // exla does too, unless an offset can pass 2^31 - 1 (a dimension of more
  // than 2^31 elements): there s32 would overflow inside the loop body and
  // slice the wrong rows without any error.
  // A floating-point sum over the chunks is accumulated with Kahan's
  // compensation. Without it the loop adds one partial sum after another, and
  // the rounding error of a sum with cancellation grows with the number of
  // chunks, beyond that of XLA's own reduction of the whole tensor (the
  // differential fuzzer measured 10 ulps against 1 on a float64 gradient).
  // With it, the error of the chunk additions is independent of their number.
  // Sums larger than the region's threshold are added plainly (see
  // SplitRegion::threshold), and so are those a tiled body writes in place
  // (SplitRegion::compensated_limit).
  bool IsCompensatedSum(HloInstruction* exit) const {
    const RegionMember& member = region_.members.at(exit);
    return member.result_dim.is_reduced_away() && member.accumulate_opcode == HloOpcode::kAdd &&
           exit->shape().IsArray() && IsFloatingPointType(exit->shape().element_type()) &&
           region_.sharding->DeviceByteSize(*exit) <=
               std::min(region_.threshold, region_.compensated_limit);
  }

  // A floating-point reduce over the split dimension and others sums, in
  // each chunk, only along the split dimension: the loop accumulates one
  // compensated sum per element of the other reduced dimensions, and they
  // are reduced once, after the loop. Reducing a whole chunk to the result
  // would leave the chunk's rounding to XLA, which adds long runs of it one
  // element after the other (XLA's CPU compiler reduces an f32[108,18] chunk
  // in windows of 32 x 18 elements): the rounding error of such a run grows
  // with its length. The differential fuzzer found a Gram matrix's mean 12
  // times further from a float64 reference than the unsplit program (seed
  // 21000000000420); with partial sums it is 6 times closer than XLA's own
  // reduction of the whole, in median over 40 draws of its inputs. The
  // partial sums and their compensations cost memory: they are kept where
  // each is at most an eighth of the operand's chunk (a chunk of at least
  // kMinPartialSumChunk units of the split dimension).
  static constexpr int64_t kMinPartialSumChunk = 8;

  struct PartialSum {
    Shape accumulator;                   // the reduce's operand without the split dimension
    std::vector<int64_t> remaining_dims;  // reduced after the loop, in the accumulator
  };

  std::optional<PartialSum> PartialSumOf(HloInstruction* exit, int64_t chunk) const {
    if (!exit->Is(HloOpcode::kReduce) || chunk < kMinPartialSumChunk ||
        region_.members.at(exit).merges_selection) {
      return std::nullopt;
    }
    const DimensionMapping split = region_.members.at(exit).operand_dims[0];
    if (!split.is_dimension()) return std::nullopt;
    const Shape& operand = exit->operand(0)->shape();
    PartialSum partial;
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (d != split.dimension()) kept.push_back(operand.dim(static_cast<int>(d)));
    }
    for (int64_t d : exit->dimensions()) {
      if (d != split.dimension()) partial.remaining_dims.push_back(d < split.dimension() ? d : d - 1);
    }
    if (partial.remaining_dims.empty()) return std::nullopt;  // the split dimension alone
    std::sort(partial.remaining_dims.begin(), partial.remaining_dims.end());
    partial.accumulator = Shape::Array(exit->shape().element_type(), std::move(kept));
    return partial;
  }

  // A sum over the split dimension larger than the region's threshold (as
  // large as a program result, see SplitRegion::threshold) starts from the
  // first trip's part: adding that part to the reduce's initial value (safe
  // to repeat: the accumulation's identity, or idempotent) or to zero gives
  // the part itself, so the values are those of the loop from zero. Sums up
  // to the threshold are small enough to start from zero.
  bool IsPeeledSum(size_t e) const {
    HloInstruction* exit = region_.exits[e];
    const RegionMember& member = region_.members.at(exit);
    return member.result_dim.is_reduced_away() && !member.merges_selection &&
           !IsCompensatedSum(exit) && region_.sharding->DeviceByteSize(*exit) > region_.threshold;
  }

  // The exit (index into region_.exits) written into input `i`'s buffer, if any.
  std::optional<size_t> InPlaceExitOf(size_t i) const {
    for (const auto& [exit, input] : region_.written_in_place) {
      if (input != i) continue;
      auto it = std::find(region_.exits.begin(), region_.exits.end(), exit);
      if (it != region_.exits.end()) return static_cast<size_t>(it - region_.exits.begin());
    }
    return std::nullopt;
  }

  const Shape& AccumulatorShape(size_t e) const {
    auto partial = partial_sums_.find(e);
    return partial == partial_sums_.end() ? region_.exits[e]->shape() : partial->second.accumulator;
  }

  const PartialSum* PartialSumFor(const HloInstruction* member) const {
    for (const auto& [e, partial] : partial_sums_) {
      if (region_.exits[e] == member) return &partial;
    }
    return nullptr;
  }

  static PrimitiveType IndexTypeFor(int64_t extent) {
    return extent > std::numeric_limits<int32_t>::max() ? PrimitiveType::kS64
                                                        : PrimitiveType::kS32;
  }
  HloInstruction* Index(HloBuilder& b, int64_t value) { return b.ConstantIndex(value, index_type_); }

  HloComputation* NewComputation(const std::string& hint) {
    auto computation = std::make_unique<HloComputation>(module_->UniqueName(hint));
    return module_->AddComputationBefore(std::move(computation), computation_);
  }

  HloComputation* MakeCondition(const Shape& state_shape, int64_t trips) {
    HloComputation* condition = NewComputation(region_.exits.front()->name() + ".split_cond");
    HloBuilder b(condition);
    HloInstruction* state = b.Parameter(0, state_shape, "state");
    HloInstruction* index = b.GetTupleElement(state, 0);
    condition->set_root(b.Compare(index, Index(b, trips), ComparisonDirection::kLt));
    return condition;
  }

  // What the steps of a loop body share while it is built.
  struct Body {
    HloComputation* computation;
    HloBuilder& b;
    HloInstruction* state;   // the loop state: index, exits, inputs, compensations
    HloInstruction* index;   // the trip number
    HloInstruction* offset;  // where this trip's slice starts
    // The start of the inputs' slices: the offset, plus in a first trip
    // that waits for another loop (WaitFor) a start that is clamped to 0.
    HloInstruction* slice_offset = nullptr;
    HloInstruction* zero;
    int64_t chunk;
    // The value each (input, dimension) has inside the body: a slice, or
    // the whole input.
    std::map<std::pair<HloInstruction*, DimensionMapping>, HloInstruction*> inputs;
    std::vector<HloInstruction*> passthrough;  // the inputs, carried unchanged
    std::unordered_map<HloInstruction*, HloInstruction*> clones;  // member -> its slice
    // A merged selection computed on the chunk, before its candidates are
    // made global (passes/tensor_splitter/topk_merge.h).
    std::unordered_map<HloInstruction*, HloInstruction*> selection_clones;
  };

  // `first`: the body of the first trip, whose peeled sums are their parts.
  HloComputation* MakeBody(const Shape& state_shape, int64_t chunk, int64_t base,
                           bool first = false) {
    HloComputation* computation = NewComputation(
        region_.exits.front()->name() + (first ? ".split_first_body" : kBodySuffix));
    bodies_.push_back(computation);
    HloBuilder b(computation);
    HloInstruction* state = b.Parameter(0, state_shape, "state");
    HloInstruction* index = b.GetTupleElement(state, 0);
    HloInstruction* offset = b.Binary(HloOpcode::kMultiply, index, Index(b, chunk));
    if (base != 0) offset = b.Binary(HloOpcode::kAdd, offset, Index(b, base));
    Body body{computation, b, state, index, offset, offset, Index(b, 0), chunk, {}, {}, {}, {}};
    const auto& elements = state_shape.tuple_shapes();
    if (first && elements.size() > 1 + region_.exits.size() + region_.inputs.size() +
                                       compensated_exits_.size()) {
      HloInstruction* wait = b.GetTupleElement(state, static_cast<int64_t>(elements.size() - 1));
      body.slice_offset = b.Binary(HloOpcode::kAdd, offset, wait);
    }
    SliceInputs(&body);
    CloneMembers(&body);
    computation->set_root(b.Tuple(NextState(&body, first)));
    return computation;
  }

  // Each input of the region, sliced along its dimension at this trip's
  // offset (or whole); the constants the region reads, copied in.
  void SliceInputs(Body* body) {
    HloBuilder& b = body->b;
    const size_t n_exits = region_.exits.size();
    for (size_t i = 0; i < region_.inputs.size(); ++i) {
      const auto& [instruction, dim] = region_.inputs[i];
      HloInstruction* whole = b.GetTupleElement(body->state, static_cast<int64_t>(1 + n_exits + i));
      body->passthrough.push_back(whole);
      // A state written in place is read from the exit's buffer: this trip's
      // slice of it is still the old value (earlier trips wrote other slices).
      if (std::optional<size_t> e = InPlaceExitOf(i)) {
        whole = b.GetTupleElement(body->state, static_cast<int64_t>(1 + *e));
      }
      if (dim.is_used_whole()) {
        body->inputs[region_.inputs[i]] = whole;
        continue;
      }
      std::vector<HloInstruction*> starts(instruction->shape().rank(), body->zero);
      starts[dim.dimension()] = body->slice_offset;
      std::vector<int64_t> sizes = instruction->shape().dims();
      sizes[dim.dimension()] = body->chunk;
      body->inputs[region_.inputs[i]] = b.DynamicSlice(whole, starts, sizes);
    }
    for (HloInstruction* constant : region_.constants) {
      HloInstruction* copy =
          body->computation->Add(HloOpcode::kConstant, constant->shape(), {}, constant->name());
      copy->set_payload(constant->payload());
      body->inputs[{constant, DimensionMapping::UsedWhole()}] = copy;
    }
  }

  // Every member of the region, computed on slices: the same instruction
  // with its shape cut to the chunk (or a partial sum's accumulator).
  void CloneMembers(Body* body) {
    HloBuilder& b = body->b;
    for (HloInstruction* original : members_in_order_) {
      const RegionMember& member = region_.members.at(original);
      Shape shape = member.result_dim.is_reduced_away()
                        ? original->shape()
                        : SliceShape(original->shape(), member.result_dim.dimension(), body->chunk);
      const PartialSum* partial = PartialSumFor(original);
      if (partial != nullptr) shape = partial->accumulator;
      if (member.merges_selection) shape = SelectionChunkShape(*original, body->chunk);
      std::vector<HloInstruction*> operands;
      for (int k = 0; k < original->operand_count(); ++k) {
        HloInstruction* operand = original->operand(k);
        auto clone = body->clones.find(operand);
        operands.push_back(clone != body->clones.end()
                               ? clone->second
                               : body->inputs.at({operand, member.operand_dims[k]}));
      }
      HloInstruction* clone =
          body->computation->Add(original->opcode(), shape, operands, original->name());
      clone->set_payload(original->payload());
      *clone->mutable_attributes() = original->attributes();
      if (partial != nullptr) {
        clone->SetIntListAttribute("dimensions", {member.operand_dims[0].dimension()});
      }
      if (original->Is(HloOpcode::kSlice)) {
        clone->SetSlice(SliceBoundsWithChunk(*original, member.result_dim.dimension(), body->chunk));
      }
      if (original->Is(HloOpcode::kIota) && member.result_dim.is_dimension() &&
          original->IntAttribute("iota_dimension") == member.result_dim.dimension()) {
        // A slice of an iota along its own dimension starts at the offset.
        HloInstruction* start = body->offset;
        if (shape.element_type() != index_type_) start = b.Convert(start, shape.element_type());
        clone = b.Binary(HloOpcode::kAdd, clone, b.Broadcast(start, shape.dims(), {}));
      }
      if (member.merges_selection) {
        body->selection_clones[original] = clone;
        clone = ChunkCandidates(b, clone, body->offset);
      }
      body->clones[original] = clone;
    }
  }

  // The state after this trip: the next index, each exit's result with this
  // trip's part accumulated or written in, the inputs, the compensations.
  std::vector<HloInstruction*> NextState(Body* body, bool first) {
    HloBuilder& b = body->b;
    std::vector<HloInstruction*> next_state = {
        b.Binary(HloOpcode::kAdd, body->index, Index(b, 1))};
    std::vector<HloInstruction*> next_compensations;
    const size_t n_exits = region_.exits.size();
    const int64_t first_compensation = static_cast<int64_t>(1 + n_exits + region_.inputs.size());
    for (size_t e = 0; e < n_exits; ++e) {
      HloInstruction* exit = region_.exits[e];
      const RegionMember& member = region_.members.at(exit);
      HloInstruction* part = body->clones.at(exit);
      if (first && IsPeeledSum(e)) {
        next_state.push_back(part);
        continue;
      }
      HloInstruction* buffer = b.GetTupleElement(body->state, static_cast<int64_t>(1 + e));
      if (IsCompensatedSum(exit)) {
        const int64_t slot = first_compensation + static_cast<int64_t>(next_compensations.size());
        HloInstruction* compensation = b.GetTupleElement(body->state, slot);
        auto [sum, next_compensation] = CompensatedAdd(body, buffer, part, compensation);
        next_compensations.push_back(next_compensation);
        next_state.push_back(sum);
      } else if (member.merges_selection) {
        next_state.push_back(
            MergeCandidates(b, *exit, body->selection_clones.at(exit), buffer, part));
      } else if (member.result_dim.is_reduced_away()) {
        next_state.push_back(b.Binary(member.accumulate_opcode, buffer, part));
      } else {
        std::vector<HloInstruction*> starts(exit->shape().rank(), body->zero);
        starts[member.result_dim.dimension()] = body->offset;
        next_state.push_back(b.DynamicUpdateSlice(buffer, part, starts));
      }
    }
    next_state.insert(next_state.end(), body->passthrough.begin(), body->passthrough.end());
    next_state.insert(next_state.end(), next_compensations.begin(), next_compensations.end());
    return next_state;
  }

  // Kahan: y = part - c; t = sum + y; c' = (t - sum) - y; sum' = t.
  // Returns (sum', c').
  std::pair<HloInstruction*, HloInstruction*> CompensatedAdd(Body* body, HloInstruction* buffer,
                                                             HloInstruction* part,
                                                             HloInstruction* compensation) {
    HloBuilder& b = body->b;
    HloInstruction* corrected = b.Binary(HloOpcode::kSubtract, part, compensation);
    HloInstruction* sum = b.Binary(HloOpcode::kAdd, buffer, corrected);
    HloInstruction* added = b.Binary(HloOpcode::kSubtract, sum, buffer);
    HloInstruction* error = b.Binary(HloOpcode::kSubtract, added, corrected);
    // Once the sum overflows, (t - sum) - y is inf - inf = NaN, which the
    // next chunk would carry into the sum: an overflowing total must stay
    // inf, as in the unsplit reduction, so the compensation restarts at 0.
    HloInstruction* finite = body->computation->Add(
        HloOpcode::kIsFinite, Shape::Array(PrimitiveType::kPred, sum->shape().dims()), {sum},
        "finite");
    HloInstruction* zero = b.Broadcast(b.ConstantScalar(sum->shape().element_type(), 0),
                                       sum->shape().dims(), {});
    return {sum, b.Select(finite, error, zero)};
  }

  const SplitRegion& region_;
  const PrimitiveType index_type_ = IndexTypeFor(region_.size);
  HloComputation* computation_;
  HloModule* module_;
  HloInstruction* after_;  // the loop the first trip waits for, or nullptr
  std::vector<HloInstruction*> members_in_order_;
  std::vector<size_t> compensated_exits_;  // indices into region_.exits
  std::map<size_t, PartialSum> partial_sums_;  // by index into region_.exits
  std::vector<HloComputation*> bodies_;
};

}  // namespace

Shape SliceShape(const Shape& shape, int64_t dim, int64_t chunk) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(SliceShape(element, dim, chunk));
    return Shape::Tuple(std::move(elements));
  }
  Shape sliced = shape;
  sliced.set_dim(static_cast<int>(dim), chunk);
  return sliced;
}

std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk,
                                                  std::vector<std::string>* notes) {
  HloComputation* computation = region.exits.front()->parent();
  std::string why_not;
  HloInstruction* after = LoopToWaitFor(region, &why_not);
  LoopBuilder loops(region, computation, chunk, after);
  HloInstruction* result;
  if (loops.PeelsFirstTrip()) {
    if (notes != nullptr && after != nullptr) {
      notes->push_back("the loop for " + region.exits.front()->name() + " starts after loop " +
                       after->name() + " ends (its first slices start at an index computed from "
                       "that loop's result)");
    } else if (notes != nullptr && !why_not.empty()) {
      notes->push_back("the loop for " + region.exits.front()->name() +
                       " is left in XLA's order: " + why_not);
    }
    // The first trip covers the remainder (or a whole chunk), then the loop
    // the rest.
    const int64_t first = region.size % chunk != 0 ? region.size % chunk : chunk;
    result = loops.FirstTrip(first);
    const int64_t trips = (region.size - first) / chunk;
    if (trips > 0) result = loops.Loop(result, chunk, trips, first);
  } else {
    result = LoopsOverChunks(loops, region.size, chunk);
  }
  HloBuilder b(computation);
  for (size_t e = 0; e < region.exits.size(); ++e) {
    HloInstruction* value = loops.ExitValue(e, b.GetTupleElement(result, static_cast<int64_t>(1 + e)));
    region.exits[e]->ReplaceAllUsesWith(value);
  }
  return loops.bodies();
}

}  // namespace exla
