// The plan search's judge by exla's models: each plan run through the
// pipeline and judged by the model of XLA CPU (model/xla_cpu_model.h:
// PredictMemory, XLA's planned peak, constants included; PredictTime), in
// milliseconds where an XLA compile takes seconds.
#ifndef EXLA_SEARCH_MODEL_JUDGE_H_
#define EXLA_SEARCH_MODEL_JUDGE_H_

#include <string>

#include "passes/options.h"
#include "search/plan_judge.h"

namespace exla {

class ModelJudge : public PlanJudge {
 public:
  // `base`: the passes, fast math, ...; its split settings are replaced by
  // each plan's. Keeps references: both must outlive the judge.
  ModelJudge(const std::string& hlo_text, const Options& base) : text_(hlo_text), base_(base) {}

  Judgement Judge(const PlanSettings& settings) override;

 private:
  const std::string& text_;
  const Options& base_;
};

}  // namespace exla

#endif  // EXLA_SEARCH_MODEL_JUDGE_H_
