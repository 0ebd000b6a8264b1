#include "search/plan_search.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <tuple>

#include "analysis/flops.h"
#include "analysis/sharding_analysis.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "model/xla_cpu_model.h"
#include "passes/pipeline.h"
#include "passes/tensor_splitter/split_choices.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "search/model_judge.h"

namespace exla {

const char* PlanOriginName(PlanOrigin origin) {
  switch (origin) {
    case PlanOrigin::kUserSettings: return "user settings";
    case PlanOrigin::kHalving: return "halving";
    case PlanOrigin::kBisection: return "bisection";
    case PlanOrigin::kLargerSlices: return "larger slices";
    case PlanOrigin::kLargeSums: return "large sums";
    case PlanOrigin::kDimension: return "other dimension";
    case PlanOrigin::kKeepWhole: return "kept whole";
    case PlanOrigin::kTwoPass: return "two passes";
    case PlanOrigin::kTiles: return "tiles";
    case PlanOrigin::kLargeChunks: return "large chunks";
  }
  return "unknown";
}

PlanOrigin PlanOriginNamed(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(PlanOrigin::kLargeChunks); ++i) {
    const auto origin = static_cast<PlanOrigin>(i);
    if (name == PlanOriginName(origin)) return origin;
  }
  throw std::invalid_argument("unknown plan origin '" + name + "'");
}

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Below this a split only multiplies loop overhead.
constexpr int64_t kMinThreshold = 1024;

// Halvings in a row without a lower peak before the search gives up on a
// ladder: the peak may plateau at a tensor that cannot be split and fall again.
constexpr int kMaxStalls = 3;

// Steps of the bisection towards larger thresholds once one fits: each
// brings the threshold within an eighth of the last one that did not fit.
constexpr int kBisectionSteps = 3;

// Values the search tries keeping whole, one at a time: those whose
// recomputation is the most work.
constexpr size_t kMaxKept = 6;

// The tiles a tiled plan's loop bodies are split into: about one core's L2
// cache (2 MB here). Attention forward + backward at seq 4,096 (JAX, 8
// heads x 64, f32; TILING.md) ran 3.3-3.5 s with 2 MB tiles, 3.5-3.7 s with
// 1 MB, 4.1 s with 4 MB and 11-13 s untiled (16 MB slices): XLA CPU
// transposes a dot's operand that is not in its order (dK = dS^T Q), and a
// transpose larger than the cache runs at 0.3 GB/s here against 6.5 GB/s
// within it. Larger tiles are untimed: not offered.
constexpr int64_t kTileBytes = int64_t{2} << 20;

// Chunks above the threshold (TILING.md, "2-D tiles"): the loops of a
// fitting plan take slices of two and four times its threshold, their
// bodies split again into tiles of a 32nd of that, so that a tile's sums
// over its rows (a key chunk's dK and dV, chunk x heads x 64 floats: a
// 128th of a slice at seq 8,192) stay below it. Causal attention forward +
// backward at seq 8,192 (JAX, 8 heads x 64, f32, threshold 62 MB, load
// 1.6-2.0, the hand-blocked JAX version 5.4-5.5 s in the same run): twice
// the threshold (key chunks of 256, 3.9 MB tiles) ran 6.7-7.0 s, planned
// 201 MiB; four times (chunks of 512, 7.7 MB tiles) 5.3-5.4 s, 214 MiB; the
// keys-only plan (chunks of 32 keys) 16.2-16.6 s at load 1.5-1.7.
constexpr int64_t kLargeChunkFactors[] = {2, 4};
constexpr int64_t kTilesPerLargeChunk = 32;

// The largest value one device holds, the threshold above which nothing splits.
int64_t LargestTensorBytes(const HloModule& module) {
  const ShardingAnalysis sharding(module);
  int64_t largest = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->shape().IsArray()) {
        largest = std::max(largest, sharding.DeviceByteSize(*instruction));
      }
    }
  }
  return largest;
}

class Search {
 public:
  Search(const HloModule& input, PlanJudge& judge, const PlanSearchOptions& options,
         PlanSearchResult* result)
      : input_(input), judge_(judge), options_(options), result_(result) {}

  void Run(int64_t largest);

 private:
  using Key = std::tuple<int64_t, int64_t, bool, std::map<std::string, int64_t>, int64_t>;

  const PlanCandidate* Consider(const PlanSettings& settings, PlanOrigin origin);
  PlanCandidate Evaluate(const PlanSettings& settings);
  const PlanCandidate* Halve(bool large_sums, int64_t start, PlanOrigin origin);
  void Bisect(int64_t low, int64_t high, bool large_sums);
  const PlanCandidate* FirstChoice() const;
  void LargerSlices(const PlanCandidate& plan);
  void OtherDimensions(const PlanCandidate& plan);
  std::vector<std::string> KeepCandidates(const PlanCandidate& plan) const;
  void KeepWhole(const PlanCandidate& plan);
  void Tiles(const PlanCandidate& plan);
  void LargeChunks(const PlanCandidate& plan);
  bool LeaveToSecondPass();
  void TwoPasses(const PlanCandidate& plan);
  bool ConsiderDimension(const PlanSettings& settings, const std::string& tensor, int64_t d);
  PlanSettings Settings(int64_t threshold, bool large_sums) const;
  // Pipeline runs count against the budget, those whose plan was dropped too.
  bool Exhausted() const {
    return static_cast<int>(result_->plans.size()) + refused_runs_ >= options_.max_plans;
  }

  const HloModule& input_;  // what a plan's names refer to
  PlanJudge& judge_;
  const PlanSearchOptions& options_;
  PlanSearchResult* result_;
  std::map<Key, size_t> seen_;  // settings -> index in result_->plans
  int64_t largest_ = 0;
  int refused_runs_ = 0;  // runs whose dimension the splitter could not take
  // The weighted sums every plan from now on leaves to a second pass
  // (kTwoPass): set once no plan with one pass fits.
  std::map<std::string, int64_t> two_pass_;
};

PlanCandidate Search::Evaluate(const PlanSettings& settings) {
  const Clock::time_point start = Clock::now();
  PlanCandidate plan;
  static_cast<Judgement&>(plan) = judge_.Judge(settings);
  plan.settings = settings;
  plan.fits = plan.peak_bytes <= options_.target;
  plan.seconds = SecondsSince(start);
  return plan;
}

// The plan with `settings`, run once: nullptr when the budget is spent.
const PlanCandidate* Search::Consider(const PlanSettings& settings, PlanOrigin origin) {
  const Key key{settings.threshold, settings.split_size, settings.large_sums, settings.dimensions,
                settings.tile_size};
  auto it = seen_.find(key);
  if (it != seen_.end()) return &result_->plans[it->second];
  if (Exhausted()) return nullptr;
  PlanCandidate plan = Evaluate(settings);
  plan.origin = origin;
  seen_[key] = result_->plans.size();
  result_->plans.push_back(std::move(plan));
  return &result_->plans.back();
}

PlanSettings Search::Settings(int64_t threshold, bool large_sums) const {
  PlanSettings settings;
  settings.threshold = threshold;
  settings.split_size = options_.split_size;
  settings.large_sums = large_sums;
  settings.dimensions = two_pass_;
  return settings;
}

// From `start` (by default the room the target leaves above the floor)
// down, halving until a plan fits or the peak stops falling; then bisects
// towards larger thresholds (fewer, larger slices). Returns the plan that
// fits, if one does.
const PlanCandidate* Search::Halve(bool large_sums, int64_t start, PlanOrigin origin) {
  const int64_t room = options_.target - result_->floor_bytes;
  int64_t t = options_.threshold > 0 ? std::min(options_.threshold, room) : room;
  if (start > 0) t = std::min(t, start);
  t = std::max(std::min(t, largest_ - 1), kMinThreshold);
  int64_t best_peak = INT64_MAX;
  for (const PlanCandidate& plan : result_->plans) best_peak = std::min(best_peak, plan.peak_bytes);
  int64_t too_big = 0;
  int stalls = 0;
  for (; t >= kMinThreshold; t /= 2) {
    const PlanCandidate* plan = Consider(Settings(t, large_sums), origin);
    if (plan == nullptr) return nullptr;
    if (plan->fits) {
      if (too_big > 0) Bisect(plan->settings.threshold, too_big, large_sums);
      return plan;  // plans are reserved up front: the pointer stays valid
    }
    too_big = t;
    stalls = plan->peak_bytes >= best_peak ? stalls + 1 : 0;
    best_peak = std::min(best_peak, plan->peak_bytes);
    if (stalls >= kMaxStalls) return nullptr;
  }
  return nullptr;
}

void Search::Bisect(int64_t low, int64_t high, bool large_sums) {
  for (int step = 0; step < kBisectionSteps; ++step) {
    if (high - low < std::max(kMinThreshold, low / 8)) return;
    const int64_t middle = low + (high - low) / 2;
    const PlanCandidate* plan = Consider(Settings(middle, large_sums), PlanOrigin::kBisection);
    if (plan == nullptr) return;
    (plan->fits ? low : high) = middle;
  }
}

// A plan with `tensor`'s loop moved to dimension `d`, kept only where the
// splitter could build it there (elsewhere it falls back to its own order,
// a plan already considered). False when the budget is spent.
bool Search::ConsiderDimension(const PlanSettings& settings, const std::string& tensor, int64_t d) {
  if (Exhausted()) return false;
  PlanCandidate plan = Evaluate(settings);
  const bool built = std::any_of(plan.loops.begin(), plan.loops.end(), [&](const SplitLoop& loop) {
    return loop.computation + "/" + loop.instruction == tensor && loop.dimension == d;
  });
  if (!built) {
    ++refused_runs_;
    return true;
  }
  plan.origin = PlanOrigin::kDimension;
  result_->plans.push_back(std::move(plan));
  return true;
}

// The fitting plan the variations start from: the least work computed
// again, then the fewest loops, then the largest threshold. (This only
// decides what to vary; the caller ranks every plan that fits.)
const PlanCandidate* Search::FirstChoice() const {
  const PlanCandidate* best = nullptr;
  auto order = [](const PlanCandidate& p) {
    return std::make_tuple(p.recomputed_flops, p.loops.size(), -p.settings.threshold);
  };
  for (const PlanCandidate& plan : result_->plans) {
    const bool variant = plan.settings.dimensions != two_pass_;  // of a first choice
    if (plan.fits && !variant && (!best || order(plan) < order(*best))) best = &plan;
  }
  return best;
}

// The weighted sums that the loops of the plans so far accumulate in one
// pass, left to a second pass by every plan from now on; false if there
// are none.
bool Search::LeaveToSecondPass() {
  for (const PlanCandidate& plan : result_->plans) {
    for (const SplitLoop& loop : plan.loops) {
      for (const std::string& sum : loop.accumulated) {
        two_pass_[loop.computation + "/" + sum] = kTwoPass;
      }
    }
  }
  return !two_pass_.empty();
}

// `plan` with its weighted sums left to a second pass: the statistics' loop
// keeps no accumulator, the second loop computes the logits again. The
// models judge which is better; where the accumulator does not fit, only
// this one may.
void Search::TwoPasses(const PlanCandidate& plan) {
  PlanSettings settings = plan.settings;
  for (const SplitLoop& loop : plan.loops) {
    for (const std::string& sum : loop.accumulated) {
      settings.dimensions[loop.computation + "/" + sum] = kTwoPass;
    }
  }
  if (settings.dimensions != plan.settings.dimensions) Consider(settings, PlanOrigin::kTwoPass);
}

// The splitter's slices default to a quarter of the threshold, which leaves
// room for the few slices a loop body keeps alive; where the target leaves
// more, larger slices mean fewer trips.
void Search::LargerSlices(const PlanCandidate& plan) {
  const PlanSettings base = plan.settings;
  for (int64_t split : {base.threshold / 2, base.threshold}) {
    PlanSettings settings = base;
    settings.split_size = split;
    const PlanCandidate* larger = Consider(settings, PlanOrigin::kLargerSlices);
    if (larger == nullptr || !larger->fits) return;
  }
}

// Each loop of `plan` moved to each other dimension of its tensor, one loop
// at a time. The longest dimension, which the splitter tries first, suits a
// single product (its loop re-reads the smaller operand), but another may
// divide into equal chunks where the longest leaves a remainder loop, or
// leave a smaller peak or less work computed again in a larger program.
void Search::OtherDimensions(const PlanCandidate& plan) {
  const PlanSettings base = plan.settings;
  for (const SplitLoop& loop : plan.loops) {
    const Shape shape = ParseShape(loop.shape);
    const Shape& array = shape.IsTuple() ? shape.tuple_shape(0) : shape;
    for (int64_t d = 0; d < array.rank(); ++d) {
      if (d == loop.dimension || array.dim(static_cast<int>(d)) < 2) continue;
      PlanSettings settings = base;
      const std::string tensor = loop.computation + "/" + loop.instruction;
      settings.dimensions[tensor] = d;
      if (!ConsiderDimension(settings, tensor, d)) return;
    }
  }
}

// The values `plan`'s loops compute again that a plan could keep whole
// instead: named in the input module (a loop body's clones are not), no
// larger than the room the target leaves above the floor, the most work
// first.
std::vector<std::string> Search::KeepCandidates(const PlanCandidate& plan) const {
  const int64_t room = options_.target - result_->floor_bytes;
  std::vector<std::pair<int64_t, std::string>> found;  // (-flops, tensor)
  std::set<std::string> seen;
  for (const SplitLoop& loop : plan.loops) {
    const HloComputation* computation = input_.FindComputation(loop.computation);
    if (computation == nullptr) continue;
    for (const std::string& name : loop.recomputed) {
      const std::string tensor = loop.computation + "/" + name;
      const HloInstruction* value = computation->FindInstruction(name);
      if (value == nullptr || !value->shape().IsArray() || value->shape().ByteSize() > room ||
          !seen.insert(tensor).second) {
        continue;
      }
      found.push_back({-InstructionFlops(*value), tensor});
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> tensors;
  for (size_t k = 0; k < found.size() && k < kMaxKept; ++k) tensors.push_back(found[k].second);
  return tensors;
}

// `plan` with each value its loops compute again kept whole instead, one at
// a time, then all of those that fit and saved work together. Keeping a
// value costs its memory for as long as it lives, recomputing it costs its
// work in every loop that needs it: the models judge which is better.
void Search::KeepWhole(const PlanCandidate& plan) {
  const PlanSettings base = plan.settings;
  const int64_t recomputed = plan.recomputed_flops;
  PlanSettings together = base;
  int saving = 0;
  for (const std::string& tensor : KeepCandidates(plan)) {
    PlanSettings settings = base;
    settings.dimensions[tensor] = kKeepWhole;
    const PlanCandidate* kept = Consider(settings, PlanOrigin::kKeepWhole);
    if (kept == nullptr) return;
    if (kept->fits && kept->recomputed_flops < recomputed) {
      together.dimensions[tensor] = kKeepWhole;
      ++saving;
    }
  }
  if (saving >= 2) Consider(together, PlanOrigin::kKeepWhole);
}

// `plan` with its loop bodies split again into tiles (TILING.md): a key
// chunk as large as the plan's slices, each trip's (rows x keys) block in
// cache-sized tiles, the running state written in place. A tile only
// matters below the slice size the plan's loops work with.
void Search::Tiles(const PlanCandidate& plan) {
  if (plan.loops.empty()) return;
  const int64_t slices =
      plan.settings.split_size > 0 ? plan.settings.split_size : plan.settings.threshold / 4;
  if (kTileBytes * 2 > slices) return;
  PlanSettings settings = plan.settings;
  settings.tile_size = kTileBytes;
  Consider(settings, PlanOrigin::kTiles);
}

// `plan` with its loops' chunks above its threshold and their bodies in
// tiles (kLargeChunkFactors): fewer trips of the outer loop, each reading
// and writing its running state (attention's dQ, the forward's output) tile
// by tile, in place. Not where the user fixed the split size.
void Search::LargeChunks(const PlanCandidate& plan) {
  if (plan.loops.empty() || options_.split_size > 0 || plan.settings.threshold <= 0) return;
  const PlanSettings base = plan.settings;  // `plan` may move as plans are added
  for (int64_t factor : kLargeChunkFactors) {
    PlanSettings settings = base;
    settings.split_size = factor * base.threshold;
    settings.tile_size = std::max(kTileBytes, settings.split_size / kTilesPerLargeChunk);
    if (Consider(settings, PlanOrigin::kLargeChunks) == nullptr) return;
  }
}

void Search::Run(int64_t largest) {
  largest_ = largest;
  PlanSettings user;
  user.threshold = options_.threshold;
  user.split_size = options_.split_size;
  const PlanCandidate* first = Consider(user, PlanOrigin::kUserSettings);
  if (first == nullptr || first->fits) return;
  const PlanCandidate* fitting = Halve(false, 0, PlanOrigin::kHalving);
  if (fitting == nullptr && options_.threshold == 0) {
    // Large sums give up the per-tensor bound, so only where nothing else
    // fits and the user set no threshold; they change nothing where every sum
    // is below the threshold, so from below the best plan so far.
    const PlanCandidate* smallest = nullptr;
    for (const PlanCandidate& plan : result_->plans) {
      if (!smallest || plan.peak_bytes < smallest->peak_bytes) smallest = &plan;
    }
    const int64_t start = smallest->settings.threshold / 2;
    Halve(true, start > 0 ? start : 0, PlanOrigin::kLargeSums);
  }
  // A loop that accumulates a weighted sum in one pass keeps the sum beside
  // the statistics; where no such plan fits, the same plans in two passes.
  if (options_.vary_structure && FirstChoice() == nullptr && LeaveToSecondPass()) {
    Halve(false, 0, PlanOrigin::kTwoPass);
  }
  const PlanCandidate* choice = FirstChoice();
  if (choice == nullptr || choice->settings.threshold == 0) return;
  if (options_.split_size == 0) LargerSlices(*choice);
  if (!options_.vary_structure) return;
  TwoPasses(*choice);
  if (choice->recomputed_flops > 0) KeepWhole(*choice);
  // Every slice size that fits at that threshold, moved to other dimensions:
  // which of them the caller ranks first is its decision.
  const PlanSettings chosen = choice->settings;
  const size_t plans = result_->plans.size();
  for (size_t i = 0; i < plans; ++i) {
    const PlanCandidate& plan = result_->plans[i];
    if (plan.fits && plan.settings.threshold == chosen.threshold &&
        plan.settings.large_sums == chosen.large_sums && plan.settings.dimensions == two_pass_) {
      OtherDimensions(plan);
    }
  }
  // The first choice in chunks above its threshold, tiled; then each plan
  // that fits at that threshold, tiled (dimension variants too: attention's
  // fastest loop order is not the splitter's first).
  LargeChunks(*choice);
  const size_t varied = result_->plans.size();
  for (size_t i = 0; i < varied; ++i) {
    const PlanCandidate& plan = result_->plans[i];
    if (plan.fits && plan.settings.threshold == chosen.threshold && plan.settings.tile_size == 0) {
      Tiles(result_->plans[i]);
    }
  }
}

// The search of `module` (parsed and verified) judged by `judge`.
PlanSearchResult SearchModule(const HloModule& module, int64_t floor_bytes, PlanJudge& judge,
                              const PlanSearchOptions& options) {
  const Clock::time_point start = Clock::now();
  PlanSearchResult result;
  result.floor_bytes = floor_bytes;
  result.plans.reserve(static_cast<size_t>(std::max(options.max_plans, 1)));
  Search(module, judge, options, &result).Run(LargestTensorBytes(module));
  result.seconds = SecondsSince(start);
  return result;
}

std::unique_ptr<HloModule> ParseVerified(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  VerifyModuleOrThrow(*module, hlo_text);
  return module;
}

}  // namespace

PlanSearchResult SearchPlans(const std::string& hlo_text, int64_t floor_bytes, PlanJudge& judge,
                             const PlanSearchOptions& options) {
  return SearchModule(*ParseVerified(hlo_text), floor_bytes, judge, options);
}

PlanSearchResult SearchPlans(const std::string& hlo_text, const Options& base,
                             const PlanSearchOptions& options) {
  const Clock::time_point start = Clock::now();
  std::unique_ptr<HloModule> module = ParseVerified(hlo_text);
  const MemoryPrediction before = PredictMemory(*module);
  // Every plan's settings are replaced: a pass list is checked once, here.
  for (const std::string& name : base.passes) CreatePass(name, base);
  ModelJudge judge(hlo_text, base);
  PlanSearchResult result = SearchModule(
      *module, before.argument_bytes + before.output_bytes - before.alias_bytes, judge, options);
  result.before = before;
  result.seconds_before = PredictTime(*module).seconds;
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace exla
