#include "passes/tensor_splitter/tensor_splitter.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/flops.h"
#include "analysis/sharding_analysis.h"
#include "pass/dce.h"
#include "passes/tensor_splitter/cost.h"
#include "passes/tensor_splitter/product_row_sums.h"
#include "passes/tensor_splitter/sort_as_topk.h"
#include "passes/tensor_splitter/strategies.h"
#include "passes/tensor_splitter/take_along_axis.h"

namespace exla {
namespace {

// Safety net: a module never needs more loops than it has instructions.
constexpr int kMaxRewritesPerComputation = 1000;

// Computations that run as ordinary sequential code (entry, loop bodies,
// branches), as opposed to scalar reducers and comparators.
std::vector<HloComputation*> ControlFlowComputations(HloModule* module) {
  std::unordered_set<HloComputation*> scalar_callees;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const HloAttribute& attribute : instruction->attributes()) {
        if (attribute.key == "to_apply" && !instruction->Is(HloOpcode::kCall)) {
          for (HloComputation* callee : attribute.computations) scalar_callees.insert(callee);
        }
      }
    }
  }
  std::vector<HloComputation*> result;
  for (const auto& computation : module->computations()) {
    if (!scalar_callees.count(computation.get())) result.push_back(computation.get());
  }
  return result;
}

// Rewrites that put a computation's values in the forms the splitter
// follows; true if the computation changed. What they leave, and why, goes
// to `notes`.
bool PrepareComputation(HloComputation* computation, int64_t limit,
                        const ShardingAnalysis& sharding, std::vector<std::string>* notes) {
  // TensorFlow's top-k (a whole sorted row, then its first k) in the form
  // whose row the splitter can split (passes/tensor_splitter/sort_as_topk.h).
  bool changed = RewriteSortSlicesAsTopK(computation, limit);
  // Dead values would otherwise be split for nothing. Removing them is a
  // change of the module like any other: reporting it keeps the pipeline's
  // clean-ups and the caller's "was anything rewritten" check truthful.
  changed |= RemoveDeadInstructions(computation);
  // Per-row gathers and scatters (take_along_axis.h) in a form slices can compute.
  if (!sharding.active() && RewriteTakeAlongAxis(computation, limit)) {
    changed = true;
    RemoveDeadInstructions(computation);
  }
  // Row sums of a product with a matrix product, read from the program's
  // own weighted sum instead (product_row_sums.h): attention's backward
  // then makes no pass over the scores for rowsum(dP ∘ P).
  if (!sharding.active() && RewriteProductRowSums(computation, limit, notes)) {
    changed = true;
    RemoveDeadInstructions(computation);
  }
  return changed;
}

// What the search on one computation keeps between the loops it builds.
struct ComputationSearch {
  HloComputation* computation;
  int64_t limit;
  int64_t split_size;
  bool large_sums;
  bool in_place_state;  // Options::in_place_loop_state
  int64_t compensated_limit;  // SplitRegion::compensated_limit
  const DimensionChoices& chosen;  // the plan search's dimensions, by tensor
  int64_t* members_grown;  // the search's work (PassRecord)
  std::unordered_set<const HloInstruction*> seeds_given_up;
  std::unordered_set<const HloInstruction*> sinks_given_up;
  // Each dimension's first refusal, by instruction name (names outlive the
  // rewrites that free and reuse instructions): a value that a loop now
  // reads whole was refused for a reason about the program as written,
  // which says more than "a tuple cannot consume it".
  std::unordered_map<std::string, std::string> reasons;
  std::unordered_map<std::string, std::unordered_set<int64_t>> reasons_seen;
  std::vector<std::pair<std::string, int64_t>> normalised;  // softmax logits and dimension
};

SplitResult SplitAtAnySeed(ComputationSearch* search, const ShardingAnalysis& sharding) {
  HloComputation* computation = search->computation;
  const int64_t limit = search->limit;
  // Recomputed after every rewrite: the loops change users and roots.
  const DoomedSeeds follow_split(computation, limit, search->split_size, sharding,
                                 search->in_place_state);
  const DoomedSeeds follow_limit(computation, limit, limit, sharding, search->in_place_state);
  const DoomedSeeds* const doomed[2] = {&follow_split, &follow_limit};
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (search->seeds_given_up.count(instruction) ||
        !IsSplitCandidate(*instruction, limit, sharding)) {
      continue;
    }
    SplitResult result = SplitAtSeed(
        instruction, limit, search->split_size, doomed, sharding, search->large_sums,
        search->chosen, &search->reasons[instruction->name()], &search->reasons_seen[instruction->name()],
        search->members_grown, search->in_place_state, search->compensated_limit);
    if (result.split) return result;
    search->seeds_given_up.insert(instruction);
  }
  return {};
}

SplitResult SplitAtAnySink(ComputationSearch* search, const ShardingAnalysis& sharding) {
  for (HloInstruction* instruction : search->computation->MakeInstructionPostOrder()) {
    if (search->sinks_given_up.count(instruction) ||
        !IsSinkCandidate(*instruction, search->limit, sharding)) {
      continue;
    }
    SplitResult result = SplitAtSink(instruction, search->limit, search->split_size, sharding,
                                     search->large_sums, search->chosen, search->members_grown,
                                     nullptr, kSinkReduction, search->in_place_state,
                                     search->compensated_limit);
    if (result.split) return result;
    search->sinks_given_up.insert(instruction);
  }
  return {};
}

// The next loop of a computation, strategies in order: a softmax's consumers
// along the dimension it normalises, its statistics, then a loop from an
// oversized value forward (a seed), then from a consumer backward (a sink).
SplitResult NextSplit(ComputationSearch* search, const ShardingAnalysis& sharding) {
  SplitResult result = SplitAlongNormalisedDimension(
      search->computation, search->limit, search->split_size, sharding, search->large_sums,
      &search->normalised, search->members_grown);
  if (result.split) return result;
  result = SplitSoftmaxStatistics(search->computation, search->limit, search->split_size,
                                  sharding, search->chosen, &search->normalised);
  if (result.split) return result;
  result = SplitAtAnySeed(search, sharding);
  if (result.split) return result;
  return SplitAtAnySink(search, sharding);
}

using LoopBodies = std::unordered_set<const HloComputation*>;

// Whether `instruction` is a buffer one of the splitter's own loops (`bodies`)
// writes whole: a result of the loop, or the splat the loop's result starts
// from. Only a result larger than the threshold by design makes one
// oversized (a sum as large as a program's result, a value the plan keeps
// whole), and a split of it cannot be asked for: the loop is what computes
// it. (The loop's inputs are not such buffers: they are reported as ever.)
bool WrittenWholeByALoop(const HloInstruction& instruction, const LoopBodies& bodies) {
  // A loop, or the call of a first trip computed before it.
  auto ours = [&](const HloInstruction* loop) {
    const char* body = loop->Is(HloOpcode::kWhile) ? "body"
                       : loop->Is(HloOpcode::kCall) ? "to_apply"
                                                    : nullptr;
    return body != nullptr && bodies.count(loop->CalledComputation(body)) != 0;
  };
  if (instruction.Is(HloOpcode::kGetTupleElement)) return ours(instruction.operand(0));
  if (!instruction.Is(HloOpcode::kBroadcast) || !instruction.operand(0)->Is(HloOpcode::kConstant)) {
    return false;
  }
  const auto& users = instruction.users();
  return !users.empty() && std::all_of(users.begin(), users.end(), [&](const HloInstruction* user) {
    return user->Is(HloOpcode::kTuple) && !user->users().empty() &&
           std::all_of(user->users().begin(), user->users().end(), ours);
  });
}

// The values of a computation still above its limit, each with every
// dimension's reason.
std::vector<UnsplitTensor> UnsplitTensors(
    const HloComputation& computation, int64_t limit, const ShardingAnalysis& sharding,
    const std::unordered_map<std::string, std::string>& reasons, const LoopBodies& bodies) {
  std::vector<UnsplitTensor> out;
  for (HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    if (!IsSplitCandidate(*instruction, limit, sharding)) continue;
    if (WrittenWholeByALoop(*instruction, bodies)) continue;
    auto reason = reasons.find(instruction->name());
    UnsplitTensor unsplit;
    unsplit.computation = computation.name();
    unsplit.instruction = instruction->name();
    unsplit.shape = instruction->shape().ToString(false);
    unsplit.bytes = sharding.LargestDeviceBytes(*instruction);
    unsplit.per_device = sharding.active();
    unsplit.reason = reason == reasons.end() || reason->second.empty()
                         ? "no consumer makes it small again"
                         : reason->second;
    out.push_back(std::move(unsplit));
  }
  return out;
}

}  // namespace

bool TensorSplitter::Run(HloModule* module) {
  const int64_t threshold = threshold_;
  if (threshold <= 0) return false;
  // Without an explicit split size, slices of a quarter of the threshold
  // leave room for the few slices a loop body keeps alive at once.
  // With a tile size the split size may exceed the threshold: it chooses
  // the outer loops' chunk (attention's key chunk), and their bodies are
  // split again into tiles below the threshold (TILING.md).
  const int64_t split_size = split_size_ <= 0  ? std::max<int64_t>(1, threshold / 4)
                             : tile_size_ > 0 ? split_size_
                                              : std::min(split_size_, threshold);
  // The splitter's loop bodies are split again against the tile size: the
  // split size chose their chunk (Options::tensor_tile_size).
  const int64_t tile_size =
      tile_size_ > 0 ? std::min({tile_size_, split_size, threshold}) : split_size;
  // Where chunks exceed the threshold, tiled bodies write the sums above a
  // tile in place, uncompensated. Plans held to the threshold keep their
  // compensation: at seq 4,096 dropping it made the cost model prefer a
  // tiled plan that ran 1.6 s over the one that runs 1.2 s.
  const int64_t compensated_limit =
      tile_size_ > 0 && in_place_state_ && split_size > threshold ? tile_size : INT64_MAX;
  bool changed = false;
  // The yardstick for the work loops repeat: the program as it came in.
  const int64_t program_flops = module->entry() ? ComputationFlops(*module->entry()) : 0;
  int64_t recomputed_flops = 0;
  int64_t region_members = 0;
  // What one device holds; a module without shardings holds whole values.
  // The analysis is made again after each loop of a sharded module, and
  // each time it learns what the plan keeps whole.
  std::unordered_set<std::string> kept;
  for (const auto& [tensor, dim] : dimensions_) {
    if (dim == kKeepWhole) kept.insert(tensor);
  }
  auto analyse = [&]() {
    ShardingAnalysis analysis(*module);
    analysis.KeepWhole(kept);
    return analysis;
  };
  ShardingAnalysis sharding = analyse();
  // The computations to split: the program's own against the threshold
  // with chunks of the split size; loop bodies we create against tile_size
  // (at most the split size), with chunks of that size.
  struct Work {
    HloComputation* computation;
    int64_t limit;
    int64_t chunk_bytes;
  };
  std::vector<Work> work;
  LoopBodies bodies;  // of the loops built so far
  for (HloComputation* computation : ControlFlowComputations(module)) {
    work.push_back({computation, threshold, split_size});
  }
  while (!work.empty()) {
    auto [computation, limit, chunk_bytes] = work.back();
    work.pop_back();
    std::vector<std::string> notes;
    changed |= PrepareComputation(computation, limit, sharding, &notes);
    for (std::string& note : notes) Log(std::move(note));
    if (sharding.active()) sharding = analyse();
    ComputationSearch search{computation,       limit,       chunk_bytes, large_sums_,
                             in_place_state_,   compensated_limit, dimensions_,
                             &region_members};
    for (int rewrites = 0; rewrites < kMaxRewritesPerComputation; ++rewrites) {
      SplitResult result = NextSplit(&search, sharding);
      if (!result.split) break;
      changed = true;
      RemoveDeadInstructions(computation);
      KeepRecomputedThatStayed(&result.loop, *computation);
      Log(SplitNoteText(result.loop));
      for (std::string& note : result.notes) Log(std::move(note));
      recomputed_flops += result.loop.recomputed_flops;
      record().loops.push_back(std::move(result.loop));
      // The loop's state and body are new values: they take their shardings
      // from the values they carry.
      if (sharding.active()) sharding = analyse();
      // A seed refused before this loop may be splittable now: in a gradient
      // program the first loop takes the forward reductions out of the way of
      // the backward pass, which one loop can then compute whole. (The loop
      // also freed instructions, whose addresses new ones may reuse.)
      search.seeds_given_up.clear();
      search.sinks_given_up.clear();
      // One unit of the split dimension may still exceed the split size, or
      // a chunk the tile size: split the bodies again, on another dimension
      // (nested loops).
      for (HloComputation* body : result.bodies) {
        work.push_back({body, tile_size, tile_size});
        bodies.insert(body);
      }
    }
    for (UnsplitTensor& unsplit :
         UnsplitTensors(*computation, limit, sharding, search.reasons, bodies)) {
      Log(UnsplitNoteText(unsplit));
      record().unsplit.push_back(std::move(unsplit));
    }
  }
  record().recomputed_flops = recomputed_flops;
  record().region_members = region_members;
  record().program_flops = program_flops;
  if (recomputed_flops > 0) Log(RecomputationNoteText(recomputed_flops, program_flops));
  return changed;
}

}  // namespace exla
