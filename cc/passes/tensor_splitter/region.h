// A split region: the part of a computation the tensor splitter turns into a
// loop over slices of one dimension.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_REGION_H_
#define EXLA_PASSES_TENSOR_SPLITTER_REGION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/dimension_map.h"
#include "analysis/sharding_analysis.h"
#include "ir/computation.h"
#include "pass/why_not.h"

namespace exla {

struct RegionMember {
  // Result dimension being split, or ReducedAway for a reduce/dot that
  // contracts it (its full result is accumulated over the loop).
  DimensionMapping result_dim = DimensionMapping::Dimension(0);
  // The split dimension of each operand, or UsedWhole.
  std::vector<DimensionMapping> operand_dims;
  HloOpcode accumulate_opcode = HloOpcode::kAdd;  // for ReducedAway members
  // A ReducedAway top-k or arg-min/arg-max: its candidates are merged chunk by
  // chunk (passes/tensor_splitter/topk_merge.h) instead of accumulated.
  bool merges_selection = false;
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
  int64_t max_bytes_per_unit = 0;  // largest member slice of extent 1
  // What one device holds of each value (the module's analysis; whole values
  // for a module on one device). Inputs of a sharded program that are cut
  // between devices along the split dimension are `gathered`: the loop slices
  // a copy that is whole on every device (see ShardingAnalysis::MaySlice).
  const ShardingAnalysis* sharding = nullptr;
  std::vector<std::pair<HloInstruction*, DimensionMapping>> gathered;
  // The threshold the region was grown against. Floating-point sums over the
  // chunks up to this size are compensated (Kahan); a larger one (allowed
  // because the program needs that much anyway) is not, as its compensation
  // would double memory that must exist anyway.
  int64_t threshold = 0;
  // Sums larger than this are added plainly even within the threshold. With
  // tiles (Options::tensor_tile_size) and chunks above the threshold, a loop
  // body writes a sum larger than a tile back in place, tile by tile; a
  // compensated sum's two buffers cannot be: each trip reads both at the
  // slice it writes, so XLA copies both whole on every trip (attention at
  // seq 8,192, key chunks of 512: four 16 MiB copies, 84 MiB of a 298 MiB
  // plan that fits in 214 MiB without).
  int64_t compensated_limit = INT64_MAX;
  // Exits that are the next value of a loop state element whose current
  // value the region reads only in slices along the same dimension (a
  // running accumulator of a loop body: FlashAttention's rescaled output,
  // a gradient summed over the outer loop's chunks), by exit, with that
  // input's index in `inputs`. The loop writes each slice of such an exit
  // into the state's own buffer: its trip reads a slice of the current value
  // and then overwrites the same slice, so no second buffer of the state's
  // size is needed, and the exit may be as large as the state.
  std::unordered_map<HloInstruction*, size_t> written_in_place;

  bool Contains(const HloInstruction* instruction) const {
    return members.count(const_cast<HloInstruction*>(instruction)) != 0;
  }
};

// Where the growth of a region starts. A seed (`operand_index` -1) is split
// along its own result dimension `dim`; any other start consumes its operand
// `operand_index` sliced along that operand's dimension `dim`.
struct RegionStart {
  HloInstruction* instruction;
  int operand_index;
  int64_t dim;
  // Whether the users of the start join the region too. A sink's do not:
  // only its producers are followed, so the loop yields the sink and computes
  // its oversized producers slice by slice, recomputing those that other
  // consumers outside the loop still need.
  bool follow_users;

  static RegionStart Seed(HloInstruction* seed, int64_t dim) { return {seed, -1, dim, true}; }
  static RegionStart Sink(HloInstruction* sink, int operand_index, int64_t dim) {
    return {sink, operand_index, dim, false};
  }
};

// Grows the region of every start at once: one loop for all of them, so that
// the producers they share are computed once. Members larger than
// `follow_limit` (capped at `threshold`) must have all their users in the
// region. Exits must be at most `threshold`, or as large as the largest sink
// (a consumer that must produce a large value anyway, such as a weight
// gradient, is still worth computing slice by slice from an even larger
// operand). Says why not when no region can be built: a start needs
// another's result, directly or through values outside, for example. Sizes
// are what one device holds, and no member or sliced input may be cut between
// devices along the split (`sharding`, which must outlive the region).
// `large_sums` lets a sum over the split dimension exceed the threshold when it
// is smaller than what the loop slices (Options::large_sums). On failure
// `region` keeps the members grown before the refusal: the growth's work.
// With `in_place_state`, a value that leaves only as a loop body's next state
// may be written into that state's buffer (SplitRegion::written_in_place);
// without it the body's result tuple cannot consume slices.
WhyNot BuildSplitRegion(const std::vector<RegionStart>& starts, int64_t threshold,
                        int64_t follow_limit, SplitRegion* region,
                        const ShardingAnalysis& sharding, bool large_sums = false,
                        bool in_place_state = false);

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
              const ShardingAnalysis& sharding = ShardingAnalysis(), bool in_place_state = false);
  // Why a region grown from `instruction` along `dim` must fail, or nullptr
  // when it may be built (BuildSplitRegion then decides).
  const std::string* Reason(const HloInstruction* instruction, int64_t dim) const;

 private:
  using Cause = std::shared_ptr<const std::string>;  // shared along a chain
  const Cause* Find(const HloInstruction* instruction, int64_t dim) const;
  std::unordered_map<const HloInstruction*, std::vector<Cause>> reasons_;
};

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_REGION_H_
