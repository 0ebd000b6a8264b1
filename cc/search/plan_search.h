// The plan search: which rewrite of a module fits a memory limit.
//
// A plan is a setting of the tensor splitter (the per-tensor threshold, the
// slice size, whether sums may stay above the threshold) plus structural
// choices: for a tensor the splitter built a loop over, the dimension that
// loop runs along; for a value its loops compute again, whether to keep it
// whole instead (its memory against the work); for a sum weighted by a
// softmax, whether the loop of the softmax's statistics accumulates it in the
// same pass or a second loop computes the logits again for it (the
// accumulator's memory against the work). The search decides which plans to
// consider (the halving ladder, bisection, larger slices, large sums, then
// the structural variations); a judge (search/plan_judge.h) runs each and
// says what XLA will plan for it: exla's models (search/model_judge.h), or
// XLA's own compile passed in from Python. Its result is data: every plan
// considered, with its settings, figures and loops. The caller
// (python/exla/memory_limit/search.py) ranks the plans that fit, runs the
// pipeline once more with the winner's settings and has XLA confirm the
// models' choice with one compile: the models guide, XLA's buffer assignment
// decides; where they miss, the same search runs judged by XLA.
#ifndef EXLA_SEARCH_PLAN_SEARCH_H_
#define EXLA_SEARCH_PLAN_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/xla_cpu_model.h"
#include "pass/pass_record.h"
#include "passes/options.h"
#include "search/plan_judge.h"

namespace exla {

// How a plan came to be considered, for the report.
enum class PlanOrigin {
  kUserSettings,  // the user's own threshold and split size (none: clean-ups only)
  kHalving,       // the threshold halved from the room the limit leaves
  kBisection,     // between a threshold that fits and one that does not
  kLargerSlices,  // a fitting plan with slices of half or all of its threshold
  kLargeSums,     // the halving again, sums allowed above the threshold
  kDimension,     // a fitting plan with one loop moved to another dimension
  kKeepWhole,     // a fitting plan with values its loops recompute kept whole
  kTwoPass,       // a plan with its softmax-weighted sums left to a second pass
  kTiles,         // a fitting plan with its loop bodies split again into tiles
  kLargeChunks,   // a fitting plan's loops in chunks above its threshold, in tiles
};

const char* PlanOriginName(PlanOrigin origin);
// The origin of that name; throws std::invalid_argument for another name.
PlanOrigin PlanOriginNamed(const std::string& name);

// One plan and what its judge says of it (the Judgement's fields).
struct PlanCandidate : Judgement {
  PlanSettings settings;
  PlanOrigin origin = PlanOrigin::kUserSettings;
  bool fits = false;              // peak_bytes <= the search's target
  double seconds = 0;             // the pipeline and the judge, for this plan
};

struct PlanSearchOptions {
  int64_t target = 0;      // the predicted peak a plan must not exceed (bytes)
  int64_t threshold = 0;   // the user's threshold: plans never exceed it (0: none)
  int64_t split_size = 0;  // the user's split size: kept (0: the search varies it)
  int max_plans = 32;      // pipeline runs at most
  // Whether fitting plans are varied beyond the threshold and slice size
  // (loops moved to other dimensions, values kept whole, sums left to a
  // second pass): cheap for the models, a compile a plan for XLA.
  bool vary_structure = true;
};

struct PlanSearchResult {
  MemoryPrediction before;        // the input module, predicted (by the models' search)
  double seconds_before = 0;      // its predicted time (by the models' search)
  int64_t floor_bytes = 0;        // its arguments + outputs - aliased: no plan goes below
  std::vector<PlanCandidate> plans;  // in the order considered
  double seconds = 0;             // the whole search
};

// Searches plans of `hlo_text` under `base` (the passes, fast math, ...;
// its split settings are replaced by each plan's), judged by exla's models
// (ModelJudge). Throws std::invalid_argument on malformed text or an unknown
// pass name.
PlanSearchResult SearchPlans(const std::string& hlo_text, const Options& base,
                             const PlanSearchOptions& options);

// The same search judged by `judge`, above the input's `floor_bytes`
// (arguments + outputs - aliased, as the judge counts them): `before` and
// `seconds_before` stay empty. Passes on what the judge throws.
PlanSearchResult SearchPlans(const std::string& hlo_text, int64_t floor_bytes, PlanJudge& judge,
                             const PlanSearchOptions& options);

}  // namespace exla

#endif  // EXLA_SEARCH_PLAN_SEARCH_H_
