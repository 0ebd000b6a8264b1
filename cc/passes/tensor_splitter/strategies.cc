#include "passes/tensor_splitter/strategies.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "passes/tensor_splitter/cost.h"
#include "passes/tensor_splitter/loops.h"
#include "passes/tensor_splitter/reduction_merge.h"
#include "passes/tensor_splitter/weighted_sums.h"

namespace exla {
namespace {

// The dimension the plan search (or a user) chose for `tensor`, if any.
std::optional<int64_t> ChosenDimension(const HloInstruction& tensor,
                                       const DimensionChoices& chosen) {
  auto choice = chosen.find(tensor.parent()->name() + "/" + tensor.name());
  if (choice == chosen.end()) return std::nullopt;
  return choice->second;
}

// Candidate dimensions, largest extent first: splitting the longest
// dimension gives the most freedom in choosing the chunk. A dimension the
// plan search chose for this tensor (Options::split_dimensions) comes first;
// if it cannot carry a loop it is refused like any other.
std::vector<int64_t> DimensionOrder(const HloInstruction& tensor, const DimensionChoices& chosen) {
  const Shape& shape = tensor.shape();
  const Shape& array = shape.IsTuple() ? shape.tuple_shape(0) : shape;
  std::vector<int64_t> dims(array.rank());
  std::iota(dims.begin(), dims.end(), 0);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return array.dim(static_cast<int>(a)) > array.dim(static_cast<int>(b));
  });
  if (const std::optional<int64_t> choice = ChosenDimension(tensor, chosen)) {
    auto it = std::find(dims.begin(), dims.end(), *choice);
    if (it != dims.end()) std::rotate(dims.begin(), it, it + 1);
  }
  return dims;
}

// Loop chunk for a region: as many units of the split dimension as fit in
// the split size, but at least two pieces (or the loop would rebuild the
// whole tensor). A chunk that divides the extent needs no remainder loop (a
// second body, compiled and run once, often for a sliver of the data: 20,000
// points in chunks of 2,499 left one of 8), so one down to half the largest
// is preferred; otherwise the pieces are made equal, so that the remainder
// is nearly a chunk.
int64_t ChunkFor(const SplitRegion& region, int64_t split_size) {
  const int64_t size = region.size;
  const int64_t largest =
      std::clamp<int64_t>(split_size / std::max<int64_t>(1, region.max_bytes_per_unit), 1,
                          (size + 1) / 2);
  int64_t best_divisor = 0;
  for (int64_t d = 1; d * d <= size; ++d) {
    if (size % d != 0) continue;
    for (int64_t divisor : {d, size / d}) {
      if (divisor <= largest && 2 * divisor >= largest) best_divisor = std::max(best_divisor, divisor);
    }
  }
  if (best_divisor > 0) return best_divisor;
  const int64_t pieces = (size + largest - 1) / largest;
  return (size + pieces - 1) / pieces;
}

SplitResult RewriteAsLoops(SplitRegion& region, const HloInstruction& anchor, int64_t dim,
                           int64_t chunk, int64_t compensated_limit) {
  region.compensated_limit = compensated_limit;
  SplitResult result;
  result.split = true;
  result.loop = DescribeSplit(region, anchor, dim, chunk);
  result.bodies = RewriteRegionAsLoops(region, chunk, &result.notes);
  return result;
}

// How a consumer outside a region, reading its operand `k` sliced along
// `dim`, joins the loop: a small consumer as a sink, an oversized one with
// its own users. An oversized consumer that reduces the dimension away is
// no smaller afterwards and gets no loop of its own; with `large_sums` it
// joins as a sink all the same, the sum the option lets a loop accumulate
// (the grower refuses one as large as what the loop slices). Left outside,
// it would keep its operand whole, and with it every producer the loop
// shares with it: a later loop for the sum would compute them all again (a
// gradient's dA Aᵀ beside the other backward sums over the same slices).
std::optional<RegionStart> JoiningStart(HloInstruction* user, int k, int64_t dim, int64_t limit,
                                        const ShardingAnalysis& sharding, bool large_sums,
                                        int64_t sink_reduction) {
  RegionStart start = {user, k, dim, /*follow_users=*/false};
  if (IsSinkCandidate(*user, limit, sharding, sink_reduction)) return start;
  const DimensionMapping mapping = ResultDimension(*user, k, dim);
  if (mapping.is_dimension()) {
    start.follow_users = true;
    return start;
  }
  if (large_sums && mapping.is_reduced_away()) return start;
  return std::nullopt;
}

// Other consumers of what `region` computes join its loop, so that one loop
// serves them all and the producers they share are computed once: a gradient
// program reads the same oversized intermediate from many consumers (row
// sums, column sums, products with vectors, the elementwise chains of the
// backward pass), and a loop per consumer would compute it once per consumer.
// Each joins as JoiningStart says, and only where the region can still be
// built (the grower refuses one that needs another's result, directly or
// through values outside the loop).
// `members_grown` counts the members of every region tried (PassRecord).
void JoinOtherUsers(std::vector<RegionStart>* starts, SplitRegion* region, int64_t limit,
                    int64_t follow_limit, const ShardingAnalysis& sharding, bool large_sums,
                    int64_t* members_grown, int64_t sink_reduction = kSinkReduction,
                    bool in_place_state = false) {
  // Each consumer is tried once: a try regrows the whole region, and a
  // consumer that cannot join rarely can after another joined.
  std::set<std::pair<const HloInstruction*, int>> tried;
  for (bool joined = true; joined;) {
    joined = false;
    std::vector<HloInstruction*> members;
    for (const auto& [member, info] : region->members) {
      if (info.result_dim.is_dimension() && IsSplitCandidate(*member, limit, sharding)) {
        members.push_back(member);
      }
    }
    // Deterministic: the members map is unordered.
    std::sort(members.begin(), members.end(),
              [](const HloInstruction* a, const HloInstruction* b) { return a->name() < b->name(); });
    for (HloInstruction* member : members) {
      const int64_t dim = region->members.at(member).result_dim.dimension();
      for (HloInstruction* user : member->users()) {
        if (region->Contains(user)) continue;
        for (int k = 0; k < user->operand_count() && !joined; ++k) {
          if (user->operand(k) != member || !tried.insert({user, k}).second) continue;
          std::optional<RegionStart> start =
              JoiningStart(user, k, dim, limit, sharding, large_sums, sink_reduction);
          if (!start.has_value()) continue;
          std::vector<RegionStart> more = *starts;
          more.push_back(*start);
          SplitRegion larger;
          const bool built =
              BuildSplitRegion(more, limit, follow_limit, &larger, sharding, large_sums,
                               in_place_state).ok();
          *members_grown += static_cast<int64_t>(larger.members.size());
          if (!built || larger.size != region->size) {
            continue;
          }
          *starts = std::move(more);
          *region = std::move(larger);
          joined = true;
        }
        if (joined) break;
      }
      if (joined) break;
    }
  }
}

// Whether a loop over `region` makes the devices talk more than the program
// did: in every iteration, where a member reduces a dimension that is cut
// between devices (the partitioner adds an all-reduce to the loop body:
// correct, since every device runs the same trips and each slice's sum is
// the slice of the whole sum, but a collective per trip), or after the loop,
// where a result leaves it whole along a dimension the program cuts (each
// device then computes and holds all of it). A loop without either is
// preferred where the program offers one.
bool LoopCommunicates(const SplitRegion& region, const ShardingAnalysis& sharding) {
  if (!sharding.active()) return false;
  for (const HloInstruction* exit : region.exits) {
    const RegionMember& info = region.members.at(const_cast<HloInstruction*>(exit));
    if (info.result_dim.is_dimension() && sharding.Pieces(*exit, info.result_dim.dimension()) > 1) {
      return true;
    }
  }
  for (const auto& [member, info] : region.members) {
    if (!member->Is(HloOpcode::kReduce) && !member->Is(HloOpcode::kDot)) continue;
    for (int k = 0; k < member->operand_count() && k < 2; ++k) {
      const HloInstruction* operand = member->operand(k);
      if (!operand->shape().IsArray() || (member->Is(HloOpcode::kReduce) && k != 0)) continue;
      std::vector<int64_t> reduced = member->dimensions();
      if (member->Is(HloOpcode::kDot)) {
        DotDimensions d = member->dot_dimensions();
        reduced = k == 0 ? d.lhs_contracting : d.rhs_contracting;
      }
      const DimensionMapping split = info.operand_dims[k];
      const std::vector<int64_t> cuts =
          sharding.Cuts(*operand, 0, split.is_dimension() ? split.dimension() : -1);
      for (int64_t dim : reduced) {
        if (dim < static_cast<int64_t>(cuts.size()) && cuts[dim] > 1) return true;
      }
    }
  }
  return false;
}

bool MergesSelections(const SplitRegion& region) {
  for (const auto& [member, info] : region.members) {
    if (info.merges_selection) return true;
  }
  return false;
}

}  // namespace

bool IsSplitCandidate(const HloInstruction& instruction, int64_t threshold,
                      const ShardingAnalysis& sharding) {
  if (instruction.Is(HloOpcode::kParameter) || instruction.Is(HloOpcode::kConstant)) return false;
  // Loop state read from a parameter is an input as well, and a
  // dynamic-update-slice writes into a buffer that exists already.
  if (instruction.Is(HloOpcode::kGetTupleElement) && instruction.operand(0)->Is(HloOpcode::kParameter)) return false;
  if (instruction.Is(HloOpcode::kDynamicUpdateSlice)) return false;
  if (instruction.shape().IsTuple() && !instruction.Is(HloOpcode::kSort) &&
      !instruction.Is(HloOpcode::kTopK)) return false;
  // A value the plan keeps whole is no candidate (ShardingAnalysis::KeepWhole).
  return sharding.BytesToSplit(instruction) > threshold;
}

bool IsSinkCandidate(const HloInstruction& instruction, int64_t limit,
                     const ShardingAnalysis& sharding, int64_t reduction) {
  if (!instruction.shape().IsArray()) return false;
  int64_t bytes = sharding.DeviceByteSize(instruction);
  if (bytes <= limit) return true;
  for (const HloInstruction* operand : instruction.operands()) {
    if (IsSplitCandidate(*operand, limit, sharding) &&
        sharding.LargestDeviceBytes(*operand) >= reduction * bytes) {
      return true;
    }
  }
  return false;
}

SplitResult SplitAtSeed(HloInstruction* seed, int64_t limit, int64_t split_size,
                        const DoomedSeeds* const doomed[2], const ShardingAnalysis& sharding,
                        bool large_sums, const DimensionChoices& chosen, std::string* reason,
                        std::unordered_set<int64_t>* reasons_seen, int64_t* members_grown,
                        bool in_place_state, int64_t compensated_limit) {
  SplitRegion talking;  // the first region whose loop communicates
  int64_t talking_dim = -1;
  SplitRegion merging;  // the first region whose loop merges top-k candidates
  int64_t merging_dim = -1;
  for (int64_t dim : DimensionOrder(*seed, chosen)) {
    for (int pass = 0; pass < 2; ++pass) {
      const int64_t follow_limit = pass == 0 ? split_size : limit;
      SplitRegion region;
      // The seed's own refusal first: it says more than its users' would.
      WhyNot error = SplitterHandles(*seed);
      if (!error.ok()) error = WhyNot::Because(seed->name() + ": " + error.reason());
      const std::string* certain = doomed[pass]->Reason(seed, dim);
      std::vector<RegionStart> starts = {RegionStart::Seed(seed, dim)};
      if (error.ok() && certain != nullptr) error = WhyNot::Because(*certain);
      if (error.ok()) {
        error = BuildSplitRegion(starts, limit, follow_limit, &region, sharding, large_sums,
                                 in_place_state);
        *members_grown += static_cast<int64_t>(region.members.size());
      }
      if (error.ok() && region.size < 2) error = WhyNot::Because("extent 1");
      if (!error.ok()) {
        // Every dimension's refusal, as the last attempt on it gave it: a user
        // deciding what to change needs all of them, not the first.
        if (follow_limit == limit && !reasons_seen->count(dim)) {
          reasons_seen->insert(dim);
          *reason += (reason->empty() ? "" : "; ") + std::string("dimension ") +
                     std::to_string(dim) + ": " + error.reason();
        }
        continue;
      }
      JoinOtherUsers(&starts, &region, limit, follow_limit, sharding, large_sums, members_grown,
                     kSinkReduction, in_place_state);
      // A dimension chosen for this tensor is taken as it is: the order below
      // is the splitter's own guess, a choice is what a search (or a user)
      // judged, and the search needs the plan that choice gives to judge it.
      if (ChosenDimension(*seed, chosen) == dim) {
        return RewriteAsLoops(region, *seed, dim, ChunkFor(region, split_size), compensated_limit);
      }
      if (talking_dim < 0 && LoopCommunicates(region, sharding)) {
        talking = std::move(region);
        talking_dim = dim;
        break;  // another dimension may need no communication
      }
      // A loop that merges selections sorts the candidates kept so far with
      // each chunk's: kNN with 10,000 queries and 1,000,000 points took 18 s
      // over blocks of queries and 36-47 s over blocks of points. It is kept
      // for where no other dimension can carry the loop, or only one whose
      // single slice is above the split size (a query whose row alone is
      // too large: its loop body could not be split again through the
      // merge it would then need).
      if (merging_dim < 0 && MergesSelections(region)) {
        merging = std::move(region);
        merging_dim = dim;
        break;
      }
      if (merging_dim >= 0 && region.max_bytes_per_unit > split_size) break;
      return RewriteAsLoops(region, *seed, dim, ChunkFor(region, split_size), compensated_limit);
    }
  }
  if (merging_dim >= 0) return RewriteAsLoops(merging, *seed, merging_dim, ChunkFor(merging, split_size), compensated_limit);
  if (talking_dim >= 0) return RewriteAsLoops(talking, *seed, talking_dim, ChunkFor(talking, split_size), compensated_limit);
  return {};
}

SplitResult SplitAtSink(HloInstruction* sink, int64_t limit, int64_t split_size,
                        const ShardingAnalysis& sharding, bool large_sums,
                        const DimensionChoices& chosen, int64_t* members_grown,
                        const std::function<bool(const SplitRegion&)>& accept,
                        int64_t sink_reduction, bool in_place_state,
                        int64_t compensated_limit) {
  for (int k = 0; k < sink->operand_count(); ++k) {
    HloInstruction* operand = sink->operand(k);
    if (!IsSplitCandidate(*operand, limit, sharding)) continue;
    for (int64_t dim : DimensionOrder(*operand, chosen)) {
      SplitRegion region;
      std::vector<RegionStart> starts = {RegionStart::Sink(sink, k, dim)};
      const bool built =
          BuildSplitRegion(starts, limit, limit, &region, sharding, large_sums, in_place_state).ok();
      *members_grown += static_cast<int64_t>(region.members.size());
      if (!built || region.size < 2 || (accept && !accept(region))) continue;
      JoinOtherUsers(&starts, &region, limit, limit, sharding, large_sums, members_grown,
                     sink_reduction, in_place_state);
      return RewriteAsLoops(region, *operand, dim, ChunkFor(region, split_size), compensated_limit);
    }
  }
  return {};
}

SplitResult SplitSoftmaxStatistics(HloComputation* computation, int64_t limit, int64_t split_size,
                                   const ShardingAnalysis& sharding, const DimensionChoices& chosen,
                                   std::vector<std::pair<std::string, int64_t>>* normalised) {
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    SoftmaxStatistics statistics;
    if (!instruction->Is(HloOpcode::kReduce) ||
        !FindSoftmaxStatistics(instruction, limit, split_size, sharding, &statistics).ok()) {
      continue;
    }
    SplitResult result;
    result.split = true;
    statistics.weighted_sums = FindWeightedSums(statistics, chosen, &result.notes);
    for (const WeightedSum& sum : statistics.weighted_sums) {
      int64_t& per_unit = statistics.region.max_bytes_per_unit;
      per_unit = std::max(per_unit, ValuesBytesPerUnit(statistics, sum));
    }
    const int64_t chunk = ChunkFor(statistics.region, split_size);
    result.loop = DescribeSplit(statistics.region, *statistics.logits, statistics.dim, chunk);
    for (const WeightedSum& sum : statistics.weighted_sums) {
      result.loop.accumulated.push_back(sum.dot->name());
    }
    normalised->push_back({statistics.logits->name(), statistics.dim});
    result.bodies = RewriteSoftmaxStatistics(statistics, chunk);
    return result;
  }
  return {};
}

// A consumer this many times smaller than the logits joins the loop as a
// result of it (a weight gradient along the vocabulary).
constexpr int64_t kNormalisedSinkReduction = 2;

SplitResult SplitAlongNormalisedDimension(
    HloComputation* computation, int64_t limit, int64_t split_size,
    const ShardingAnalysis& sharding, bool large_sums,
    std::vector<std::pair<std::string, int64_t>>* normalised, int64_t* members_grown) {
  while (!normalised->empty()) {
    const auto [name, dim] = normalised->back();
    HloInstruction* logits = computation->FindInstruction(name);
    auto along_dim = [&](const SplitRegion& region) {
      auto member = region.members.find(logits);
      return member != region.members.end() &&
             member->second.result_dim == DimensionMapping::Dimension(dim);
    };
    if (logits != nullptr && IsSplitCandidate(*logits, limit, sharding)) {
      const std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        if (!IsSinkCandidate(**it, limit, sharding, kNormalisedSinkReduction)) continue;
        // The dimension is the softmax's: no other choice applies.
        SplitResult result = SplitAtSink(*it, limit, split_size, sharding, large_sums,
                                         DimensionChoices{}, members_grown, along_dim,
                                         kNormalisedSinkReduction);
        if (result.split) return result;
      }
    }
    normalised->pop_back();  // done, or left to the other strategies
  }
  return {};
}

}  // namespace exla
