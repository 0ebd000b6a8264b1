// The tensor splitter's strategies: each finds one region of a computation
// that a loop over slices can compute, and rewrites it as that loop.
// TensorSplitter::Run (tensor_splitter.h) tries them in order, one loop at
// a time, and reports what is left above the threshold.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_STRATEGIES_H_
#define EXLA_PASSES_TENSOR_SPLITTER_STRATEGIES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/sharding_analysis.h"
#include "ir/computation.h"
#include "pass/pass_record.h"
#include "passes/tensor_splitter/region.h"
#include "passes/tensor_splitter/split_choices.h"

namespace exla {

// One loop built, or none (`split` false).
struct SplitResult {
  bool split = false;
  std::vector<HloComputation*> bodies;
  SplitLoop loop;  // read before the rewrite: the region no longer exists after it
  std::vector<std::string> notes;  // what the loop left out, and why, for the log
};

// Inputs and literals are already in memory; splitting starts at the first
// instruction that *creates* an oversized value.
// Sizes are what one device holds (`sharding`).
bool IsSplitCandidate(const HloInstruction& instruction, int64_t threshold,
                      const ShardingAnalysis& sharding);

// A consumer that makes an oversized operand small again: below the limit,
// or at least kSinkReduction times smaller than the operand (a weight
// gradient reduced over a huge batch of activations must exist anyway, the
// activations need not).
constexpr int64_t kSinkReduction = 8;

bool IsSinkCandidate(const HloInstruction& instruction, int64_t limit,
                     const ShardingAnalysis& sharding, int64_t reduction = kSinkReduction);

// Strategy 1: one loop for `seed` and everything downstream of it up to
// where the data is small again: preferably down to the split size, so that
// no result of the loop is a new buffer nearly as large as the limit; where
// that region cannot be built, down to the limit.
// `doomed` holds, for each follow limit tried (split_size, then limit), the
// seeds whose region must fail: they are refused without growing a region.
SplitResult SplitAtSeed(HloInstruction* seed, int64_t limit, int64_t split_size,
                        const DoomedSeeds* const doomed[2], const ShardingAnalysis& sharding,
                        bool large_sums, const DimensionChoices& chosen, std::string* reason,
                        std::unordered_set<int64_t>* reasons_seen, int64_t* members_grown,
                        bool in_place_state = false, int64_t compensated_limit = INT64_MAX);

// Strategy 2: a loop for a small consumer of an oversized value and every
// other small consumer that can share it, recomputing the oversized
// producers that consumers outside the loop still need. Used where one loop
// for all consumers is impossible, typically in gradient programs where
// results of reductions over the big tensor flow back into other uses of it.
// `accept`, when given, must accept the region; `sink_reduction` as for
// IsSinkCandidate, for the consumers that join. `in_place_state`, here and
// for SplitAtSeed: BuildSplitRegion's; `compensated_limit`: the loop's
// SplitRegion::compensated_limit.
SplitResult SplitAtSink(HloInstruction* sink, int64_t limit, int64_t split_size,
                        const ShardingAnalysis& sharding, bool large_sums,
                        const DimensionChoices& chosen, int64_t* members_grown,
                        const std::function<bool(const SplitRegion&)>& accept = nullptr,
                        int64_t sink_reduction = kSinkReduction, bool in_place_state = false,
                        int64_t compensated_limit = INT64_MAX);

// Strategy 0 (reduction_merge.h): a softmax's maximum and sum of
// exponentials in one loop along the dimension they reduce, and the sums
// weighted by the softmax (weighted_sums.h: attention's output) in the same
// pass, unless `chosen` leaves them to a second loop (kTwoPass). The logits
// and that dimension are noted in `normalised`, by name (a rewrite frees
// instructions whose addresses new ones may reuse).
SplitResult SplitSoftmaxStatistics(HloComputation* computation, int64_t limit, int64_t split_size,
                                   const ShardingAnalysis& sharding, const DimensionChoices& chosen,
                                   std::vector<std::pair<std::string, int64_t>>* normalised);

// Then the softmax's consumers, split along the same dimension: a loop for
// the values they make (a loss, the gradients), computing the logits slice
// by slice, where the splitter would otherwise split the rows again. A
// consumer a few times smaller than the logits (a weight gradient along the
// vocabulary) is a result of the loop too, and the last consumers are tried
// first, so that one loop serves the gradients and the loss.
// `normalised` as SplitSoftmaxStatistics leaves it.
SplitResult SplitAlongNormalisedDimension(
    HloComputation* computation, int64_t limit, int64_t split_size,
    const ShardingAnalysis& sharding, bool large_sums,
    std::vector<std::pair<std::string, int64_t>>* normalised, int64_t* members_grown);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_STRATEGIES_H_
