#include "passes/split_region.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/module.h"
#include "passes/split_dimension_map.h"

namespace exla {
namespace {

int64_t ExtentOfDim(const Shape& shape, int64_t dim) {
  const Shape& array = shape.IsTuple() ? shape.tuple_shape(0) : shape;
  return array.dim(static_cast<int>(dim));
}

// Producers worth recomputing slice by slice inside the loop rather than
// slicing their materialised value: anything oversized (that is what we are
// removing) and broadcasts/iotas, which are free to recompute.
bool ShouldRecompute(const HloInstruction* producer, int64_t threshold,
                     const ShardingAnalysis& sharding) {
  if (producer->Is(HloOpcode::kParameter) || producer->Is(HloOpcode::kConstant)) return false;
  if (!SplitterHandles(*producer).ok()) return false;
  if (producer->shape().IsTuple() && !producer->Is(HloOpcode::kSort) && !producer->Is(HloOpcode::kTopK)) return false;
  return sharding.LargestDeviceBytes(*producer) > threshold || producer->Is(HloOpcode::kBroadcast) ||
         producer->Is(HloOpcode::kIota);
}

// Whether `producer`, a floating-point value that some arithmetic computes,
// reaches a floating-point compare for (in)equality. Such a value must be
// computed once: XLA rounds a slice of a dot or a reduction (a
// matrix-vector product, a smaller block) differently from the whole, and
// even an elementwise log1p can differ between the vectorised body and the
// scalar tail of a loop. A gradient of max compares the maximum, taken from
// one computation, with every element, taken from another: recomputed
// slices would match nothing (the fuzzer found gradients 5-100% off).
bool FeedsFloatEquality(const HloInstruction* producer) {
  switch (producer->opcode()) {
    // Moving data rounds nothing: recomputing it gives the same bits.
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kIota:
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
      return false;
    default:
      break;
  }
  if (!producer->shape().IsArray() || !IsFloatingPointType(producer->shape().element_type())) {
    return false;
  }
  std::vector<const HloInstruction*> stack = {producer};
  std::unordered_set<const HloInstruction*> seen = {producer};
  while (!stack.empty()) {
    const HloInstruction* value = stack.back();
    stack.pop_back();
    for (const HloInstruction* user : value->users()) {
      if (user->Is(HloOpcode::kCompare)) {
        std::optional<ComparisonDirection> direction = user->comparison_direction();
        const Shape& operand = user->operand(0)->shape();
        if (direction.has_value() &&
            (*direction == ComparisonDirection::kEq || *direction == ComparisonDirection::kNe) &&
            operand.IsArray() && IsFloatingPointType(operand.element_type())) {
          return true;
        }
      }
      if (seen.insert(user).second) stack.push_back(user);
    }
  }
  return false;
}

// Members added by every region growth so far (see RegionMembersGrown).
std::atomic<int64_t> members_grown{0};

// The two ways following a member's users fails for the member itself:
// VisitUsers below and DoomedSeeds share them, so both say the same.
std::string ResultTooLarge(const HloInstruction& instruction) {
  return instruction.name() + " is the computation's result and too large to split";
}

std::string CannotConsume(const HloInstruction& user, int64_t dim) {
  WhyNot handled = SplitterHandles(user);
  return user.name() + " (" + std::string(user.opcode_name()) +
         ") cannot consume slices along dimension " + std::to_string(dim) +
         (handled.ok() ? "" : ": " + handled.reason());
}

// Whether the grower follows `user`'s own users once it joins a region as
// `mapping` (see VisitUsers).
bool FollowsUser(const HloInstruction& user, DimensionMapping mapping, int64_t follow_limit,
                 const ShardingAnalysis& sharding) {
  return !mapping.is_reduced_away() &&
         (sharding.LargestDeviceBytes(user) > follow_limit || user.shape().IsTuple());
}

class RegionGrower {
 public:
  // Results of the loop may be as large as `exit_limit` (at least the
  // threshold): a consumer that must produce a large value anyway, such as a
  // weight gradient, is still worth computing slice by slice from an even
  // larger operand.
  //
  // Users larger than `follow_limit` (at most the threshold) join the region:
  // stopping at the threshold would write every exit of up to the threshold
  // into a whole buffer, and a following elementwise op would then need a
  // second one, where the unsplit program needed a single buffer.
  RegionGrower(int64_t threshold, int64_t exit_limit, SplitRegion* region,
               const ShardingAnalysis& sharding, int64_t follow_limit = -1)
      : threshold_(threshold),
        follow_limit_(follow_limit < 0 ? threshold : std::min(threshold, follow_limit)),
        exit_limit_(std::max(threshold, exit_limit)),
        region_(region),
        sharding_(sharding) {
    region_->sharding = &sharding_;
  }

  WhyNot Grow(const std::vector<RegionStart>& starts) {
    const RegionStart& first = starts.front();
    const HloInstruction* first_sliced =
        first.operand_index < 0 ? first.instruction : first.instruction->operand(first.operand_index);
    region_->size = ExtentOfDim(first_sliced->shape(), first.dim);
    region_->threshold = threshold_;
    const HloComputation* computation = first.instruction->parent();
    if (computation == computation->parent()->entry() && computation->root() != nullptr) {
      largest_output_bytes_ = sharding_.LargestDeviceBytes(*computation->root());
    }
    for (const RegionStart& start : starts) {
      const HloInstruction* sliced =
          start.operand_index < 0 ? start.instruction : start.instruction->operand(start.operand_index);
      largest_start_bytes_ = std::max(largest_start_bytes_, sharding_.LargestDeviceBytes(*sliced));
    }
    for (const RegionStart& start : starts) {
      WhyNot error = AddStart(start);
      if (!error.ok()) return error;
    }
    WhyNot error = Drain();
    // An input computed from the loop's own results is computed inside the
    // loop instead (which pulls in its producers in turn), until every input
    // comes from outside. Each round adds members, so this ends.
    while (error.ok()) {
      bool absorbed = false;
      error = AbsorbInputsComputedInside(&absorbed);
      if (!error.ok() || !absorbed) break;
      error = Drain();
    }
    return Finish(error);
  }

 private:
  static WhyNot Because(std::string reason) { return WhyNot::Because(std::move(reason)); }

  // A sum over the split dimension as large as a result of the program
  // (a weight gradient over a batch, a program output or the size of one)
  // may be accumulated however large it is: that much memory is needed
  // anyway, while the values the loop slices, larger still, are not. Only
  // in the entry computation, whose results are the program's.
  bool AccumulatesWhatMustExistAnyway(int64_t bytes) const {
    return bytes <= largest_output_bytes_ && bytes < largest_start_bytes_;
  }

  WhyNot AddStart(const RegionStart& start) {
    HloInstruction* instruction = start.instruction;
    if (start.operand_index < 0) {
      if (ExtentOfDim(instruction->shape(), start.dim) != region_->size) {
        return Because(instruction->name() + " is split along a dimension of another extent");
      }
      return AddMember(instruction, DimensionMapping::Dimension(start.dim), start.follow_users,
                       /*downstream=*/true, -1, -1);
    }
    const HloInstruction* operand = instruction->operand(start.operand_index);
    if (ExtentOfDim(operand->shape(), start.dim) != region_->size) {
      return Because(instruction->name() + " reads a dimension of another extent");
    }
    DimensionMapping result_dim = ResultDimension(*instruction, start.operand_index, start.dim);
    if (result_dim.is_not_splittable()) return Because(CannotConsume(*instruction, start.dim));
    return AddMember(instruction, result_dim, start.follow_users, /*downstream=*/true,
                     start.operand_index, start.dim);
  }

  // Visits the members added since the last call: their operands always,
  // their users where the member asked for it.
  WhyNot Drain() {
    WhyNot error = WhyNot::Ok();
    while (error.ok() && !worklist_.empty()) {
      auto [instruction, follow_users] = worklist_.front();
      worklist_.pop_front();
      error = VisitOperands(instruction);
      if (error.ok() && follow_users) error = VisitUsers(instruction);
    }
    return error;
  }

  // Inputs sliced along the split dimension that are computed from what the
  // loop computes (a softmax's row maximum, reduced over another dimension,
  // broadcast back and subtracted from the rows it came from) become members:
  // each slice of them needs only the same slice of the loop's values. An
  // input used whole that depends on the loop cannot be: it needs every
  // slice first (CheckNoCycleThroughInputs refuses it).
  WhyNot AbsorbInputsComputedInside(bool* absorbed) {
    // Everything reachable from a member through users outside the region.
    std::unordered_set<const HloInstruction*> after_loop;
    std::vector<const HloInstruction*> stack;
    for (const auto& [member, info] : region_->members) {
      if (info.downstream) stack.push_back(member);
    }
    while (!stack.empty()) {
      const HloInstruction* value = stack.back();
      stack.pop_back();
      for (const HloInstruction* user : value->users()) {
        if (!region_->Contains(user) && after_loop.insert(user).second) stack.push_back(user);
      }
    }
    std::vector<std::pair<HloInstruction*, DimensionMapping>> outside;
    std::vector<std::pair<HloInstruction*, DimensionMapping>> inside;
    for (const auto& input : region_->inputs) {
      (input.second.is_dimension() && after_loop.count(input.first) ? inside : outside)
          .push_back(input);
    }
    *absorbed = !inside.empty();
    region_->inputs = std::move(outside);
    for (const auto& [instruction, dim] : inside) {
      WhyNot error = AddMember(instruction, dim, /*follow_users=*/false, /*downstream=*/true, -1, -1);
      if (!error.ok()) return error;
    }
    return WhyNot::Ok();
  }

  WhyNot Finish(WhyNot error) {
    if (error.ok()) error = CollectExits();
    if (error.ok()) error = CheckNoCycleThroughInputs();
    return error;
  }

  // Adds `instruction` split on result dimension `dim` (or ReducedAway, in
  // which case `entering_operand`/`entering_dim` say how the split reaches it).
  WhyNot AddMember(HloInstruction* instruction, DimensionMapping dim, bool follow_users,
                        bool downstream, int entering_operand, int64_t entering_dim) {
    auto existing = region_->members.find(instruction);
    if (existing != region_->members.end()) {
      if (existing->second.result_dim != dim) {
        return Because(instruction->name() + " would be split on two different dimensions");
      }
      existing->second.downstream |= downstream;
      if (follow_users && !followed_.count(instruction)) {
        followed_.insert(instruction);
        worklist_.push_back({instruction, true});
      }
      return WhyNot::Ok();
    }
    // A value the loop already reads from outside in another form (whole,
    // say, as the other operand of pᵀp) cannot also be computed in slices:
    // the body has one value per instruction.
    for (const auto& [input, mapping] : region_->inputs) {
      if (input == instruction && mapping != dim) {
        return Because(instruction->name() + " would be split on two different dimensions");
      }
    }
    WhyNot handled = SplitterHandles(*instruction);
    if (!handled.ok()) return Because(instruction->name() + ": " + handled.reason());
    if (instruction->Is(HloOpcode::kParameter) || instruction->Is(HloOpcode::kConstant)) {
      return Because(instruction->name() + " is a " + std::string(instruction->opcode_name()));
    }
    RegionMember member;
    member.result_dim = dim;
    member.downstream = downstream;
    if (dim.is_reduced_away()) {
      std::optional<HloOpcode> accumulate = AccumulationOpcode(*instruction);
      if (!accumulate.has_value()) {
        return Because(instruction->name() + " reduces the split dimension with a reducer that "
                       "cannot be accumulated slice by slice");
      }
      member.accumulate_opcode = *accumulate;
      const int64_t bytes = sharding_.LargestDeviceBytes(*instruction);
      if (bytes > exit_limit_ && !AccumulatesWhatMustExistAnyway(bytes)) {
        return Because(instruction->name() + " reduces the split dimension but is itself too large");
      }
      member.operand_dims = ContractedOperandDims(*instruction, entering_operand, entering_dim);
    } else {
      if (ExtentOfDim(instruction->shape(), dim.dimension()) != region_->size) {
        return Because(instruction->name() + ": split dimension changes extent");
      }
      WhyNot whole = sharding_.MayLoopOver(*instruction, dim.dimension());
      if (!whole.ok()) return whole;
      for (int k = 0; k < instruction->operand_count(); ++k) {
        DimensionMapping od = OperandDimension(*instruction, dim.dimension(), k);
        if (od.is_not_splittable()) {
          return Because(instruction->name() + " (" + std::string(instruction->opcode_name()) +
                         ") cannot be computed from slices along dimension " +
                         std::to_string(dim.dimension()));
        }
        member.operand_dims.push_back(od);
      }
    }
    if (entering_operand >= 0 &&
        member.operand_dims[entering_operand] != DimensionMapping::Dimension(entering_dim)) {
      return Because(instruction->name() + ": inconsistent split dimension");
    }
    region_->members.emplace(instruction, member);
    members_grown.fetch_add(1, std::memory_order_relaxed);
    if (!dim.is_reduced_away()) {
      int64_t bytes = sharding_.DeviceByteSize(*instruction, dim.dimension());
      region_->max_bytes_per_unit =
          std::max(region_->max_bytes_per_unit, (bytes + region_->size - 1) / region_->size);
    }
    if (follow_users) followed_.insert(instruction);
    worklist_.push_back({instruction, follow_users});
    return WhyNot::Ok();
  }

  // Operand dimensions of a reduce/dot whose result no longer has the split
  // dimension: the entering operand is split on `entering_dim`, the other
  // operand of a dot on the matching contracting dimension.
  static std::vector<DimensionMapping> ContractedOperandDims(const HloInstruction& instruction,
                                                             int entering_operand,
                                                             int64_t entering_dim) {
    std::vector<DimensionMapping> dims(instruction.operand_count(), DimensionMapping::UsedWhole());
    dims[entering_operand] = DimensionMapping::Dimension(entering_dim);
    if (instruction.Is(HloOpcode::kDot)) {
      DotDimensions d = instruction.dot_dimensions();
      const auto& mine = entering_operand == 0 ? d.lhs_contracting : d.rhs_contracting;
      const auto& other = entering_operand == 0 ? d.rhs_contracting : d.lhs_contracting;
      for (size_t i = 0; i < mine.size(); ++i) {
        if (mine[i] == entering_dim) dims[1 - entering_operand] = DimensionMapping::Dimension(other[i]);
      }
    }
    return dims;
  }

  WhyNot VisitOperands(HloInstruction* instruction) {
    const RegionMember member = region_->members.at(instruction);
    for (int k = 0; k < instruction->operand_count(); ++k) {
      HloInstruction* operand = instruction->operand(k);
      DimensionMapping od = member.operand_dims[k];
      auto existing = region_->members.find(operand);
      if (existing != region_->members.end()) {
        if (existing->second.result_dim.is_reduced_away()) {
          return Because(operand->name() +
                         " is needed inside the loop before it is fully accumulated");
        }
        if (existing->second.result_dim != od) {
          return Because(operand->name() + " would be split on two different dimensions");
        }
        continue;
      }
      if (od.is_dimension() && ShouldRecompute(operand, threshold_, sharding_) &&
          !EqualitySensitive(operand)) {
        WhyNot error = AddMember(operand, od, /*follow_users=*/false, /*downstream=*/false, -1, -1);
        if (error.ok()) continue;
        // Not recomputable: fall back to slicing its materialised value.
      }
      if (od.is_dimension() &&
          (!operand->shape().IsArray() ||
           operand->shape().dim(static_cast<int>(od.dimension())) != region_->size)) {
        return Because(operand->name() + " cannot be sliced along the split dimension");
      }
      bool gather = false;
      if (od.is_dimension()) {
        WhyNot sliced = sharding_.MaySlice(*operand, od.dimension(), threshold_, &gather);
        if (!sliced.ok()) return sliced;
      }
      AddInput(operand, od, gather);
    }
    return WhyNot::Ok();
  }

  WhyNot VisitUsers(HloInstruction* instruction) {
    // Only members split along a real dimension have their users followed.
    const int64_t dim = region_->members.at(instruction).result_dim.dimension();
    if (instruction == instruction->parent()->root()) return Because(ResultTooLarge(*instruction));
    for (HloInstruction* user : instruction->users()) {
      for (int k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) != instruction) continue;
        DimensionMapping ud = ResultDimension(*user, k, dim);
        if (ud.is_not_splittable()) return Because(CannotConsume(*user, dim));
        // Oversized users must be followed further; so must tuples (sort,
        // top-k), whose values leave through their get-tuple-elements.
        bool follow = FollowsUser(*user, ud, follow_limit_, sharding_);
        WhyNot error = AddMember(user, ud, follow, /*downstream=*/true, k, dim);
        if (!error.ok()) return error;
      }
    }
    return WhyNot::Ok();
  }

  bool EqualitySensitive(const HloInstruction* producer) {
    auto it = equality_sensitive_.find(producer);
    if (it == equality_sensitive_.end()) {
      it = equality_sensitive_.emplace(producer, FeedsFloatEquality(producer)).first;
    }
    return it->second;
  }

  void AddInput(HloInstruction* instruction, DimensionMapping dim, bool gather) {
    if (dim.is_used_whole() && instruction->Is(HloOpcode::kConstant) && instruction->shape().IsArray() &&
        instruction->shape().rank() == 0) {
      auto& constants = region_->constants;
      if (std::find(constants.begin(), constants.end(), instruction) == constants.end()) {
        constants.push_back(instruction);
      }
      return;
    }
    std::pair<HloInstruction*, DimensionMapping> key = {instruction, dim};
    if (std::find(region_->inputs.begin(), region_->inputs.end(), key) == region_->inputs.end()) {
      region_->inputs.push_back(key);
      if (gather) region_->gathered.push_back(key);
      if (dim.is_dimension()) {
        int64_t bytes = gather ? instruction->shape().ByteSize()
                               : sharding_.DeviceByteSize(*instruction, dim.dimension());
        region_->max_bytes_per_unit =
            std::max(region_->max_bytes_per_unit, (bytes + region_->size - 1) / region_->size);
      }
    }
  }

  WhyNot CollectExits() {
    for (const auto& [instruction, member] : region_->members) {
      bool leaves = instruction == instruction->parent()->root();
      for (HloInstruction* user : instruction->users()) leaves |= !region_->Contains(user);
      if (member.result_dim.is_reduced_away()) {
        for (HloInstruction* user : instruction->users()) {
          if (region_->Contains(user)) {
            return Because(instruction->name() +
                           " is used inside the loop before it is fully accumulated");
          }
        }
        region_->exits.push_back(instruction);
        continue;
      }
      // A recomputed producer keeps its original for users outside.
      if (!leaves || !member.downstream) continue;
      if (!instruction->shape().IsArray()) {
        return Because(instruction->name() + " leaves the loop but is not an array");
      }
      // The loop writes it whole along the split dimension.
      const int64_t bytes = sharding_.DeviceByteSize(*instruction, member.result_dim.dimension());
      if (bytes > exit_limit_) {
        return Because(instruction->name() + " (" + HumanBytes(bytes) + sharding_.PerDevice() +
                       ") is used outside the region and would stay too large");
      }
      region_->exits.push_back(instruction);
    }
    if (region_->exits.empty()) return Because("the region has no result");
    // Deterministic order: as printed.
    std::vector<HloInstruction*> order =
        region_->exits.front()->parent()->MakeInstructionPostOrder();
    std::unordered_map<HloInstruction*, size_t> position;
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    std::sort(region_->exits.begin(), region_->exits.end(),
              [&](HloInstruction* a, HloInstruction* b) { return position[a] < position[b]; });
    return WhyNot::Ok();
  }

  // The loop consumes the inputs and produces the exits; if an input depends
  // on what the loop produces the rewrite would create a cycle. A producer
  // the loop merely recomputes keeps its original outside, so inputs may
  // depend on that.
  WhyNot CheckNoCycleThroughInputs() {
    std::unordered_set<HloInstruction*> seen;
    std::vector<HloInstruction*> stack;
    for (const auto& input : region_->inputs) stack.push_back(input.first);
    while (!stack.empty()) {
      HloInstruction* current = stack.back();
      stack.pop_back();
      if (!seen.insert(current).second) continue;
      auto member = region_->members.find(current);
      if (member != region_->members.end() && member->second.downstream) {
        return Because("a value the loop needs depends on the loop's own results");
      }
      for (HloInstruction* operand : current->operands()) stack.push_back(operand);
    }
    return WhyNot::Ok();
  }

  int64_t threshold_;
  int64_t follow_limit_;
  int64_t exit_limit_;
  int64_t largest_output_bytes_ = 0;  // of the program's results; 0 outside the entry
  int64_t largest_start_bytes_ = 0;   // the largest value a start slices
  SplitRegion* region_;
  const ShardingAnalysis& sharding_;
  std::deque<std::pair<HloInstruction*, bool>> worklist_;
  std::unordered_set<HloInstruction*> followed_;
  std::unordered_map<const HloInstruction*, bool> equality_sensitive_;
};

// ---- rewriting --------------------------------------------------------------

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

std::vector<SliceBounds> SliceBoundsWithChunk(const HloInstruction& slice, int64_t dim, int64_t chunk) {
  std::vector<SliceBounds> bounds = slice.slice();
  bounds[dim].limit = chunk;
  return bounds;
}

class LoopBuilder {
 public:
  LoopBuilder(const SplitRegion& region, HloComputation* computation, int64_t chunk)
      : region_(region), computation_(computation), module_(computation->parent()) {
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
  HloInstruction* InitialState() {
    HloBuilder b(computation_);
    std::vector<HloInstruction*> elements = {Index(b, 0)};
    for (size_t e = 0; e < region_.exits.size(); ++e) {
      HloInstruction* exit = region_.exits[e];
      const RegionMember& member = region_.members.at(exit);
      const Shape& shape = AccumulatorShape(e);
      HloInstruction* init;
      if (member.result_dim.is_reduced_away() && exit->Is(HloOpcode::kReduce)) {
        init = exit->operand(1);  // checked to be safe to repeat
      } else {
        init = b.ConstantScalar(shape.element_type(), 0);
      }
      elements.push_back(b.Broadcast(init, shape.dims(), {}));
    }
    for (const auto& input : region_.inputs) {
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

  // One while loop processing `trips` chunks of `chunk` starting at `base`.
  HloInstruction* Loop(HloInstruction* state, int64_t chunk, int64_t trips, int64_t base) {
    HloComputation* body = MakeBody(state->shape(), chunk, base);
    HloComputation* condition = MakeCondition(state->shape(), trips);
    HloBuilder b(computation_);
    // The remainder loop restarts its index at 0.
    if (state->Is(HloOpcode::kWhile)) {
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
  // SplitRegion::threshold).
  bool IsCompensatedSum(HloInstruction* exit) const {
    const RegionMember& member = region_.members.at(exit);
    return member.result_dim.is_reduced_away() && member.accumulate_opcode == HloOpcode::kAdd &&
           exit->shape().IsArray() && IsFloatingPointType(exit->shape().element_type()) &&
           region_.sharding->DeviceByteSize(*exit) <= region_.threshold;
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
    if (!exit->Is(HloOpcode::kReduce) || chunk < kMinPartialSumChunk) return std::nullopt;
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

  HloComputation* MakeBody(const Shape& state_shape, int64_t chunk, int64_t base) {
    HloComputation* body = NewComputation(region_.exits.front()->name() + ".split_body");
    bodies_.push_back(body);
    HloBuilder b(body);
    HloInstruction* state = b.Parameter(0, state_shape, "state");
    HloInstruction* index = b.GetTupleElement(state, 0);
    HloInstruction* offset = b.Binary(HloOpcode::kMultiply, index, Index(b, chunk));
    if (base != 0) offset = b.Binary(HloOpcode::kAdd, offset, Index(b, base));
    HloInstruction* zero = Index(b, 0);

    const size_t n_exits = region_.exits.size();
    std::vector<HloInstruction*> passthrough;
    std::map<std::pair<HloInstruction*, DimensionMapping>, HloInstruction*> input_values;
    for (size_t i = 0; i < region_.inputs.size(); ++i) {
      const auto& [instruction, dim] = region_.inputs[i];
      HloInstruction* whole = b.GetTupleElement(state, static_cast<int64_t>(1 + n_exits + i));
      passthrough.push_back(whole);
      if (dim.is_used_whole()) {
        input_values[region_.inputs[i]] = whole;
        continue;
      }
      std::vector<HloInstruction*> starts(instruction->shape().rank(), zero);
      starts[dim.dimension()] = offset;
      std::vector<int64_t> sizes = instruction->shape().dims();
      sizes[dim.dimension()] = chunk;
      input_values[region_.inputs[i]] = b.DynamicSlice(whole, starts, sizes);
    }

    for (HloInstruction* constant : region_.constants) {
      HloInstruction* copy = body->Add(HloOpcode::kConstant, constant->shape(), {}, constant->name());
      copy->set_payload(constant->payload());
      input_values[{constant, DimensionMapping::UsedWhole()}] = copy;
    }

    std::unordered_map<HloInstruction*, HloInstruction*> clones;
    for (HloInstruction* original : members_in_order_) {
      const RegionMember& member = region_.members.at(original);
      Shape shape = member.result_dim.is_reduced_away()
                        ? original->shape()
                        : SliceShape(original->shape(), member.result_dim.dimension(), chunk);
      const PartialSum* partial = PartialSumFor(original);
      if (partial != nullptr) shape = partial->accumulator;
      std::vector<HloInstruction*> operands;
      for (int k = 0; k < original->operand_count(); ++k) {
        HloInstruction* operand = original->operand(k);
        auto clone = clones.find(operand);
        operands.push_back(clone != clones.end()
                               ? clone->second
                               : input_values.at({operand, member.operand_dims[k]}));
      }
      HloInstruction* clone = body->Add(original->opcode(), shape, operands, original->name());
      clone->set_payload(original->payload());
      *clone->mutable_attributes() = original->attributes();
      if (partial != nullptr) {
        clone->SetIntListAttribute("dimensions", {member.operand_dims[0].dimension()});
      }
      if (original->Is(HloOpcode::kSlice)) {
        clone->SetSlice(SliceBoundsWithChunk(*original, member.result_dim.dimension(), chunk));
      }
      if (original->Is(HloOpcode::kIota) && member.result_dim.is_dimension() &&
          original->IntAttribute("iota_dimension") == member.result_dim.dimension()) {
        // A slice of an iota along its own dimension starts at the offset.
        HloInstruction* start = offset;
        if (shape.element_type() != index_type_) start = b.Convert(offset, shape.element_type());
        clone = b.Binary(HloOpcode::kAdd, clone, b.Broadcast(start, shape.dims(), {}));
      }
      clones[original] = clone;
    }

    std::vector<HloInstruction*> next_state = {b.Binary(HloOpcode::kAdd, index, Index(b, 1))};
    std::vector<HloInstruction*> next_compensations;
    const int64_t first_compensation = static_cast<int64_t>(1 + n_exits + region_.inputs.size());
    for (size_t e = 0; e < n_exits; ++e) {
      HloInstruction* exit = region_.exits[e];
      const RegionMember& member = region_.members.at(exit);
      HloInstruction* buffer = b.GetTupleElement(state, static_cast<int64_t>(1 + e));
      HloInstruction* part = clones.at(exit);
      if (IsCompensatedSum(exit)) {
        // Kahan: y = part - c; t = sum + y; c' = (t - sum) - y; sum' = t.
        const int64_t slot = first_compensation + static_cast<int64_t>(next_compensations.size());
        HloInstruction* compensation = b.GetTupleElement(state, slot);
        HloInstruction* corrected = b.Binary(HloOpcode::kSubtract, part, compensation);
        HloInstruction* sum = b.Binary(HloOpcode::kAdd, buffer, corrected);
        HloInstruction* added = b.Binary(HloOpcode::kSubtract, sum, buffer);
        HloInstruction* error = b.Binary(HloOpcode::kSubtract, added, corrected);
        // Once the sum overflows, (t - sum) - y is inf - inf = NaN, which the
        // next chunk would carry into the sum: an overflowing total must stay
        // inf, as in the unsplit reduction, so the compensation restarts at 0.
        HloInstruction* finite = body->Add(
            HloOpcode::kIsFinite, Shape::Array(PrimitiveType::kPred, sum->shape().dims()), {sum},
            "finite");
        HloInstruction* zero = b.Broadcast(b.ConstantScalar(sum->shape().element_type(), 0),
                                           sum->shape().dims(), {});
        next_compensations.push_back(b.Select(finite, error, zero));
        next_state.push_back(sum);
      } else if (member.result_dim.is_reduced_away()) {
        next_state.push_back(b.Binary(member.accumulate_opcode, buffer, part));
      } else {
        std::vector<HloInstruction*> starts(exit->shape().rank(), zero);
        starts[member.result_dim.dimension()] = offset;
        next_state.push_back(b.DynamicUpdateSlice(buffer, part, starts));
      }
    }
    next_state.insert(next_state.end(), passthrough.begin(), passthrough.end());
    next_state.insert(next_state.end(), next_compensations.begin(), next_compensations.end());
    body->set_root(b.Tuple(next_state));
    return body;
  }

  const SplitRegion& region_;
  const PrimitiveType index_type_ = IndexTypeFor(region_.size);
  HloComputation* computation_;
  HloModule* module_;
  std::vector<HloInstruction*> members_in_order_;
  std::vector<size_t> compensated_exits_;  // indices into region_.exits
  std::map<size_t, PartialSum> partial_sums_;  // by index into region_.exits
  std::vector<HloComputation*> bodies_;
};

}  // namespace

int64_t LargestArrayBytes(const Shape& shape) {
  if (!shape.IsTuple()) return shape.ByteSize();
  int64_t largest = 0;
  for (const Shape& element : shape.tuple_shapes()) {
    largest = std::max(largest, LargestArrayBytes(element));
  }
  return largest;
}

WhyNot BuildSplitRegion(const std::vector<RegionStart>& starts, int64_t threshold,
                        int64_t follow_limit, SplitRegion* region,
                        const ShardingAnalysis& sharding) {
  int64_t largest_sink = 0;
  for (const RegionStart& start : starts) {
    if (!start.follow_users) {
      largest_sink = std::max(largest_sink, sharding.LargestDeviceBytes(*start.instruction));
    }
  }
  RegionGrower grower(threshold, largest_sink, region, sharding, follow_limit);
  return grower.Grow(starts);
}

int64_t RegionMembersGrown() { return members_grown.load(std::memory_order_relaxed); }

DoomedSeeds::DoomedSeeds(HloComputation* computation, int64_t threshold, int64_t follow_limit,
                         const ShardingAnalysis& sharding) {
  follow_limit = std::min(threshold, follow_limit);
  // Users before their operands: a member's fate depends on its users'.
  std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* instruction = *it;
    const Shape& shape = instruction->shape().IsTuple() && !instruction->shape().tuple_shapes().empty()
                             ? instruction->shape().tuple_shape(0)
                             : instruction->shape();
    if (!shape.IsArray()) continue;
    std::vector<Cause>& reasons = reasons_[instruction];
    reasons.resize(shape.rank());
    for (int64_t dim = 0; dim < shape.rank(); ++dim) {
      if (instruction == computation->root()) {
        reasons[dim] = std::make_shared<const std::string>(ResultTooLarge(*instruction));
        continue;
      }
      WhyNot whole = sharding.MayLoopOver(*instruction, dim);
      if (!whole.ok()) {
        reasons[dim] = std::make_shared<const std::string>(whole.reason());
        continue;
      }
      for (HloInstruction* user : instruction->users()) {
        for (int k = 0; k < user->operand_count() && !reasons[dim]; ++k) {
          if (user->operand(k) != instruction) continue;
          DimensionMapping mapping = ResultDimension(*user, k, dim);
          if (mapping.is_not_splittable()) {
            reasons[dim] = std::make_shared<const std::string>(CannotConsume(*user, dim));
          } else if (mapping.is_dimension() && FollowsUser(*user, mapping, follow_limit, sharding)) {
            if (const Cause* downstream = Find(user, mapping.dimension())) reasons[dim] = *downstream;
          }
        }
        if (reasons[dim]) break;
      }
    }
  }
}

const DoomedSeeds::Cause* DoomedSeeds::Find(const HloInstruction* instruction, int64_t dim) const {
  auto it = reasons_.find(instruction);
  if (it == reasons_.end() || dim < 0 || dim >= static_cast<int64_t>(it->second.size())) return nullptr;
  return it->second[dim] ? &it->second[dim] : nullptr;
}

const std::string* DoomedSeeds::Reason(const HloInstruction* instruction, int64_t dim) const {
  const Cause* reason = Find(instruction, dim);
  return reason ? reason->get() : nullptr;
}

std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk) {
  HloComputation* computation = region.exits.front()->parent();
  LoopBuilder loops(region, computation, chunk);
  const int64_t trips = region.size / chunk;
  const int64_t remainder = region.size % chunk;
  HloInstruction* state = loops.InitialState();
  HloInstruction* result = loops.Loop(state, chunk, trips, 0);
  if (remainder != 0) result = loops.Loop(result, remainder, 1, trips * chunk);
  HloBuilder b(computation);
  for (size_t e = 0; e < region.exits.size(); ++e) {
    HloInstruction* value = loops.ExitValue(e, b.GetTupleElement(result, static_cast<int64_t>(1 + e)));
    region.exits[e]->ReplaceAllUsesWith(value);
  }
  return loops.bodies();
}

}  // namespace exla
