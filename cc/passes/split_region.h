// A split region: the part of a computation the tensor splitter turns into a
// loop over slices of one dimension.
#ifndef EXLA_PASSES_SPLIT_REGION_H_
#define EXLA_PASSES_SPLIT_REGION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/computation.h"
#include "passes/split_dimension_map.h"
#include "passes/split_sharding.h"
#include "passes/why_not.h"

namespace exla {

struct RegionMember {
  // Result dimension being split, or ReducedAway for a reduce/dot that
  // contracts it (its full result is accumulated over the loop).
  DimensionMapping result_dim = DimensionMapping::Dimension(0);
  // The split dimension of each operand, or UsedWhole.
  std::vector<DimensionMapping> operand_dims;
  HloOpcode accumulate_opcode = HloOpcode::kAdd;  // for ReducedAway members
  // Reached from the seed through users (as opposed to a producer that is
  // merely recomputed inside the loop). Only such members can be results of
  // the loop: a recomputed producer keeps serving its other users outside.
  bool downstream = false;
};

struct SplitRegion {
  int64_t size = 0;  // extent of the split dimension
  std::unordered_map<HloInstruction*, RegionMember> members;
  // Values from outside the loop: (instruction, dimension to slice or
  // UsedWhole), in first-use order.
  std::vector<std::pair<HloInstruction*, DimensionMapping>> inputs;
  // Scalar constants used whole: copied into the loop body rather than
  // carried through the loop state.
  std::vector<HloInstruction*> constants;
  // Members whose values leave the loop.
  std::vector<HloInstruction*> exits;
  // Inputs of a sharded program that are cut between devices along the
  // split dimension: the loop slices a copy that is whole on every device
  // (see ShardingAnalysis::MaySlice), made by `sharding`.
  std::vector<std::pair<HloInstruction*, DimensionMapping>> gathered;
  const ShardingAnalysis* sharding = nullptr;
  int64_t max_bytes_per_unit = 0;  // largest member slice of extent 1

  bool Contains(const HloInstruction* instruction) const {
    return members.count(const_cast<HloInstruction*>(instruction)) != 0;
  }
};

// Bytes of an array; of the largest element for a tuple (what must fit).
int64_t LargestArrayBytes(const Shape& shape);

// Grows a region from `seed`, split along result dimension `dim`. Members
// larger than `follow_limit` (capped at `threshold`) must have all their users
// in the region; exits must be at most `threshold`. Says why not when no
// region can be built. Sizes are what one device holds, and no member or
// sliced input may be cut between devices along the split (`sharding`; the
// default is a module on one device).
WhyNot BuildSplitRegion(HloInstruction* seed, int64_t dim, int64_t threshold,
                        int64_t follow_limit, SplitRegion* region,
                        const ShardingAnalysis& sharding = ShardingAnalysis());

// Grows a region backwards from `sink`, an instruction much smaller than its
// oversized operand `operand_index` (usually below `threshold`), split along
// that operand's dimension `dim`. Only producers are followed, so the loop has one result (the sink)
// and the oversized producers are recomputed slice by slice; their other
// consumers keep the original until they get loops of their own.
WhyNot BuildSinkRegion(HloInstruction* sink, int operand_index, int64_t dim,
                       int64_t threshold, SplitRegion* region,
                       const ShardingAnalysis& sharding = ShardingAnalysis());

// One consumer of a shared loop: `sink` reads its operand `operand_index`
// sliced along that operand's dimension `dim`.
struct SinkUse {
  HloInstruction* sink;
  int operand_index;
  int64_t dim;
};

// The region of several sinks at once: one loop computes the oversized
// producers they share once and yields every sink. Fails (as for one sink)
// where a sink needs another's result, directly or through values outside.
WhyNot BuildSinkRegion(const std::vector<SinkUse>& sinks, int64_t threshold,
                       SplitRegion* region, const ShardingAnalysis& sharding = ShardingAnalysis());

// Seeds whose region cannot be built, found in one pass over the computation
// instead of growing a region from each: a region grown from an instruction
// along a dimension follows its oversized users, so it fails for certain if
// following them reaches the computation's result while still too large, or
// a user that cannot consume slices along the dimension the split reaches it
// with (VisitUsers' two refusals), or a dimension cut between devices. Without this, a chain of n oversized
// instructions that ends in the program's output costs n region growths of
// up to n members each. `follow_limit` as for BuildSplitRegion.
class DoomedSeeds {
 public:
  DoomedSeeds(HloComputation* computation, int64_t threshold, int64_t follow_limit,
              const ShardingAnalysis& sharding = ShardingAnalysis());
  // Why a region grown from `instruction` along `dim` must fail, or nullptr
  // when it may be built (BuildSplitRegion then decides).
  const std::string* Reason(const HloInstruction* instruction, int64_t dim) const;

 private:
  using Cause = std::shared_ptr<const std::string>;  // shared along a chain
  const Cause* Find(const HloInstruction* instruction, int64_t dim) const;
  std::unordered_map<const HloInstruction*, std::vector<Cause>> reasons_;
};

// Members added to regions by every BuildSplitRegion/BuildSinkRegion of the
// process so far: the splitter's work, which tests hold to linear growth in
// the program's size (wall time would be a flaky measure of the same).
int64_t RegionMembersGrown();

// Replaces the region by loops over chunks of `chunk` elements of the split
// dimension. Returns the loop body computations it created.
std::vector<HloComputation*> RewriteRegionAsLoops(const SplitRegion& region, int64_t chunk);

}  // namespace exla

#endif  // EXLA_PASSES_SPLIT_REGION_H_
