// What the plan search asks of a judge: run one plan and say what XLA will
// plan for it.
//
// The search (search/plan_search.h) decides which plans to consider; a judge
// decides what each one costs. Two judges exist: exla's models
// (search/model_judge.h: the pipeline and the model of XLA CPU, milliseconds
// a plan), and XLA itself, passed in from Python as a callback
// (bindings/plan_search_module.cc: exla's pipeline, then an XLA compile,
// seconds a plan), for the plans the models cannot judge or misjudged.
#ifndef EXLA_SEARCH_PLAN_JUDGE_H_
#define EXLA_SEARCH_PLAN_JUDGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pass/pass_record.h"

namespace exla {

// The splitter settings that make one plan (Options fields of the same names).
struct PlanSettings {
  int64_t threshold = 0;   // per-tensor threshold; 0: none (the user's settings alone)
  int64_t split_size = 0;  // slice size in loop bodies; 0: the splitter's default
  bool large_sums = false;
  // Options::split_dimensions (kKeepWhole and kTwoPass too)
  std::map<std::string, int64_t> dimensions;
  // Options::tensor_tile_size, with Options::in_place_loop_state: the
  // bodies of the splitter's loops split again into tiles of this size,
  // running state written in place (TILING.md); 0: neither.
  int64_t tile_size = 0;
};

// One plan, run and judged.
struct Judgement {
  int64_t peak_bytes = 0;         // the planned peak, constants included: the judge's figure
  double predicted_seconds = 0;   // the cost model's time
  bool changed = false;           // a pass other than a clean-up changed the module
  std::vector<SplitLoop> loops;   // the splitter's loops
  int64_t recomputed_flops = 0;   // what those loops compute again
  int64_t program_flops = 0;      // the input program's work
};

class PlanJudge {
 public:
  virtual ~PlanJudge() = default;
  // Runs the pipeline with `settings` on the search's module and judges the
  // result. May throw; the search passes the exception on.
  virtual Judgement Judge(const PlanSettings& settings) = 0;
};

}  // namespace exla

#endif  // EXLA_SEARCH_PLAN_JUDGE_H_
