#include "passes/tensor_splitter/region.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_set>

#include "analysis/dimension_map.h"
#include "analysis/selections.h"
#include "ir/module.h"
#include "passes/tensor_splitter/exact_values.h"
#include "passes/tensor_splitter/topk_merge.h"

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
  // A value the plan keeps whole is read in slices, never recomputed.
  if (sharding.KeptWhole(*producer)) return false;
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
//
// A value computed exactly, or with IEEE's correctly rounded operations
// alone, has the same bits however it is sliced (exact_values.h): TensorFlow's
// one-hot labels, `select(labels == iota, 1, 0) + nan_mask`, are compared
// with 0 in its cross-entropy gradient and are free to recompute.
bool FeedsFloatEquality(const HloInstruction* producer) {
  if (ComputedExactly(producer)) return false;
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
         (sharding.BytesToSplit(user) > follow_limit || user.shape().IsTuple());
}

// Whether `user` is the result of a loop body (the root tuple of a
// computation whose one parameter has the root's shape): what it takes is
// the next value of the loop's state, which the body may write in place
// (SplitRegion::written_in_place).
bool IsLoopBodyResult(const HloInstruction& user) {
  const HloComputation* body = user.parent();
  if (&user != body->root() || !user.Is(HloOpcode::kTuple)) return false;
  const HloInstruction* state = body->parameter(0);
  return state != nullptr && state->shape() == user.shape();
}

// An element of a loop body's state: an input of the body, which a region
// slices and never recomputes (its parameter cannot be sliced). Without
// in-place state the grower still tries, and refuses the region, as it
// always has: its plans stay those the plan search was tuned on.
bool IsLoopState(const HloInstruction& value) {
  return value.Is(HloOpcode::kGetTupleElement) && value.operand(0)->Is(HloOpcode::kParameter);
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
               const ShardingAnalysis& sharding, int64_t follow_limit, bool large_sums,
               bool in_place_state)
      : threshold_(threshold),
        large_sums_(large_sums),
        in_place_state_(in_place_state),
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
  // in the entry computation, whose results are the program's. With
  // `large_sums_`, any sum smaller than what the loop slices: the loop still
  // saves memory, and the memory-limit search measures whether it is enough.
  bool AccumulatesWhatMustExistAnyway(int64_t bytes) const {
    return (large_sums_ || bytes <= largest_output_bytes_) && bytes < largest_start_bytes_;
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
      return RevisitMember(&*existing, dim, follow_users, downstream);
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
    WhyNot error = dim.is_reduced_away()
                       ? AccumulatingMember(*instruction, entering_operand, entering_dim, &member)
                       : SlicedMember(*instruction, dim.dimension(), &member);
    if (!error.ok()) return error;
    if (entering_operand >= 0 &&
        member.operand_dims[entering_operand] != DimensionMapping::Dimension(entering_dim)) {
      return Because(instruction->name() + ": inconsistent split dimension");
    }
    region_->members.emplace(instruction, member);
    if (!dim.is_reduced_away()) {
      int64_t bytes = sharding_.DeviceByteSize(*instruction, dim.dimension());
      region_->max_bytes_per_unit =
          std::max(region_->max_bytes_per_unit, (bytes + region_->size - 1) / region_->size);
    }
    if (follow_users) followed_.insert(instruction);
    worklist_.push_back({instruction, follow_users});
    return WhyNot::Ok();
  }

  // A member reached again: on the same dimension it may now also be
  // downstream, or have its users followed.
  WhyNot RevisitMember(std::pair<HloInstruction* const, RegionMember>* existing,
                       DimensionMapping dim, bool follow_users, bool downstream) {
    HloInstruction* instruction = existing->first;
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

  // A member whose result no longer has the split dimension: it accumulates
  // (or merges selections) slice by slice, and must be small enough to.
  WhyNot AccumulatingMember(const HloInstruction& instruction, int entering_operand,
                            int64_t entering_dim, RegionMember* member) {
    member->merges_selection = IsMergedSelection(instruction, entering_operand, entering_dim);
    std::optional<HloOpcode> accumulate =
        member->merges_selection ? HloOpcode::kTuple : AccumulationOpcode(instruction);
    if (!accumulate.has_value()) {
      return Because(instruction.name() + " reduces the split dimension with a reducer that "
                     "cannot be accumulated slice by slice");
    }
    member->accumulate_opcode = *accumulate;
    const int64_t bytes = sharding_.BytesToSplit(instruction);
    if (bytes > exit_limit_ && !AccumulatesWhatMustExistAnyway(bytes)) {
      return Because(instruction.name() + " reduces the split dimension but is itself too large");
    }
    member->operand_dims = ContractedOperandDims(instruction, entering_operand, entering_dim);
    return WhyNot::Ok();
  }

  // A member computed slice by slice along result dimension `dim`: each
  // operand's dimension, or the reason one cannot be sliced.
  WhyNot SlicedMember(const HloInstruction& instruction, int64_t dim, RegionMember* member) {
    if (ExtentOfDim(instruction.shape(), dim) != region_->size) {
      return Because(instruction.name() + ": split dimension changes extent");
    }
    WhyNot whole = sharding_.MayLoopOver(instruction, dim);
    if (!whole.ok()) return whole;
    for (int k = 0; k < instruction.operand_count(); ++k) {
      DimensionMapping od = OperandDimension(instruction, dim, k);
      if (od.is_not_splittable()) {
        return Because(instruction.name() + " (" + std::string(instruction.opcode_name()) +
                       ") cannot be computed from slices along dimension " + std::to_string(dim));
      }
      member->operand_dims.push_back(od);
    }
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
    // An arg-min's values and indices are sliced together.
    if (instruction.Is(HloOpcode::kReduce)) {
      for (int k = 0; k < instruction.operand_count() / 2; ++k) {
        dims[k] = DimensionMapping::Dimension(entering_dim);
      }
    }
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
          !EqualitySensitive(operand) && !(in_place_state_ && IsLoopState(*operand))) {
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
        // The next loop state: the value leaves the region there, and
        // CollectExits decides whether it may be written in place.
        if (in_place_state_ && IsLoopBodyResult(*user)) continue;
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
      // A value the plan keeps whole is written whole, whatever its size.
      const int64_t bytes = sharding_.DeviceByteSize(*instruction, member.result_dim.dimension());
      if (std::optional<size_t> state = StateWrittenInPlace(*instruction, member.result_dim)) {
        region_->written_in_place[instruction] = *state;
        region_->exits.push_back(instruction);
        continue;
      }
      if (bytes > exit_limit_ && !sharding_.KeptWhole(*instruction)) {
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

  // The input (its index in the region's inputs) whose buffer `exit` may be
  // written into: `exit` leaves the region only as element k of its loop
  // body's result, and the region reads element k of the body's state only
  // in slices along the dimension `exit` is split on, so each trip reads a
  // slice of the old value before it writes the same slice of the new one.
  // A state that other values outside the region read keeps its buffer
  // (XLA copies it), and is not written in place.
  std::optional<size_t> StateWrittenInPlace(const HloInstruction& exit,
                                            DimensionMapping mapping) const {
    if (!in_place_state_ || sharding_.active()) return std::nullopt;
    std::optional<int64_t> slot;
    for (const HloInstruction* user : exit.users()) {
      if (region_->Contains(user)) continue;
      if (!IsLoopBodyResult(*user)) return std::nullopt;
      for (int k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) != &exit) continue;
        if (slot.has_value()) return std::nullopt;  // two state elements
        slot = k;
      }
    }
    if (!slot.has_value() || &exit == exit.parent()->root()) return std::nullopt;
    std::optional<size_t> found;
    for (size_t i = 0; i < region_->inputs.size(); ++i) {
      const auto& [input, dim] = region_->inputs[i];
      if (!input->Is(HloOpcode::kGetTupleElement) || input->IntAttribute("index") != *slot ||
          input->operand(0) != exit.parent()->parameter(0)) {
        continue;
      }
      if (dim != mapping || found.has_value() || input->shape() != exit.shape()) return std::nullopt;
      found = i;
    }
    if (!found.has_value()) return std::nullopt;
    for (const HloInstruction* user : region_->inputs[*found].first->users()) {
      if (!region_->Contains(user)) return std::nullopt;
    }
    return found;
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
  bool large_sums_;  // Options::large_sums
  bool in_place_state_;  // Options::in_place_loop_state
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

}  // namespace

WhyNot BuildSplitRegion(const std::vector<RegionStart>& starts, int64_t threshold,
                        int64_t follow_limit, SplitRegion* region,
                        const ShardingAnalysis& sharding, bool large_sums,
                        bool in_place_state) {
  int64_t largest_sink = 0;
  for (const RegionStart& start : starts) {
    if (!start.follow_users) {
      largest_sink = std::max(largest_sink, sharding.LargestDeviceBytes(*start.instruction));
    }
  }
  RegionGrower grower(threshold, largest_sink, region, sharding, follow_limit, large_sums,
                      in_place_state);
  return grower.Grow(starts);
}

DoomedSeeds::DoomedSeeds(HloComputation* computation, int64_t threshold, int64_t follow_limit,
                         const ShardingAnalysis& sharding, bool in_place_state) {
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
          if (user->operand(k) != instruction || (in_place_state && IsLoopBodyResult(*user))) {
            continue;
          }
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

}  // namespace exla
