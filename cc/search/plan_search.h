// The plan search: which rewrite of a module fits a memory limit, judged by
// exla's own models instead of XLA compilations.
//
// A plan is a setting of the tensor splitter (the per-tensor threshold, the
// slice size, whether sums may stay above the threshold) plus structural
// choices: for a tensor the splitter built a loop over, the dimension that
// loop runs along; for a value its loops compute again, whether to keep it
// whole instead (its memory against the work); for a sum weighted by a
// softmax, whether the loop of the softmax's statistics accumulates it in the
// same pass or a second loop computes the logits again for it (the
// accumulator's memory against the work). The search runs the pipeline
// for each plan it considers and judges the result with the model of XLA
// CPU (model/xla_cpu_model.h: PredictMemory, XLA's planned peak, constants
// included; PredictTime, the time it would take), in milliseconds where an
// XLA compile takes seconds. Its result is data: every plan
// considered, with its settings, predictions and loops. The caller ranks the
// plans that fit, runs the pipeline once more with the winner's settings and
// has XLA confirm it with one compile (python/exla/_memory_limit.py): the
// models guide, XLA's buffer assignment decides.
#ifndef EXLA_SEARCH_PLAN_SEARCH_H_
#define EXLA_SEARCH_PLAN_SEARCH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/xla_cpu_model.h"
#include "pass/pass_record.h"
#include "passes/options.h"

namespace exla {

// The splitter settings that make one plan (Options fields of the same names).
struct PlanSettings {
  int64_t threshold = 0;   // per-tensor threshold; 0: none (the user's settings alone)
  int64_t split_size = 0;  // slice size in loop bodies; 0: the splitter's default
  bool large_sums = false;
  // Options::split_dimensions (kKeepWhole and kTwoPass too)
  std::map<std::string, int64_t> dimensions;
};

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
};

const char* PlanOriginName(PlanOrigin origin);

// One plan and what the models predict for it.
struct PlanCandidate {
  PlanSettings settings;
  PlanOrigin origin = PlanOrigin::kUserSettings;
  MemoryPrediction memory;        // the memory model's figures of the rewritten module
  double predicted_seconds = 0;   // the cost model's time
  bool fits = false;              // memory.peak_bytes() <= the search's target
  bool changed = false;           // a pass other than a clean-up changed the module
  std::vector<SplitLoop> loops;   // the splitter's loops
  int64_t recomputed_flops = 0;   // what those loops compute again
  int64_t program_flops = 0;      // the input program's work
  double seconds = 0;             // the pipeline and the models, for this plan
};

struct PlanSearchOptions {
  int64_t target = 0;      // the predicted peak a plan must not exceed (bytes)
  int64_t threshold = 0;   // the user's threshold: plans never exceed it (0: none)
  int64_t split_size = 0;  // the user's split size: kept (0: the search varies it)
  int max_plans = 32;      // pipeline runs at most
};

struct PlanSearchResult {
  MemoryPrediction before;        // the input module, predicted
  double seconds_before = 0;      // its predicted time
  int64_t floor_bytes = 0;        // its arguments + outputs - aliased: no plan goes below
  std::vector<PlanCandidate> plans;  // in the order considered
  double seconds = 0;             // the whole search
};

// Searches plans of `hlo_text` under `base` (the passes, fast math, ...;
// its split settings are replaced by each plan's). Throws
// std::invalid_argument on malformed text or an unknown pass name.
PlanSearchResult SearchPlans(const std::string& hlo_text, const Options& base,
                             const PlanSearchOptions& options);


}  // namespace exla

#endif  // EXLA_SEARCH_PLAN_SEARCH_H_
