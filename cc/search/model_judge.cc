#include "search/model_judge.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "ir/parser.h"
#include "model/xla_cpu_model.h"
#include "passes/pipeline.h"

namespace exla {
namespace {

Options WithSettings(const Options& base, const PlanSettings& settings) {
  Options options = base;
  options.tensor_size_threshold = settings.threshold;
  options.tensor_split_size = settings.split_size;
  options.large_sums = settings.large_sums;
  options.split_dimensions = settings.dimensions;
  options.tensor_tile_size = settings.tile_size;
  options.in_place_loop_state = settings.tile_size > 0;
  options.dump_dir.clear();  // a search writes no dumps: only the chosen plan is the user's
  return options;
}

bool ChangedBesidesCleanups(const std::vector<PassRecord>& records) {
  const std::vector<std::string> cleanups = CleanupPasses();
  return std::any_of(records.begin(), records.end(), [&](const PassRecord& r) {
    return r.changed && std::find(cleanups.begin(), cleanups.end(), r.name) == cleanups.end();
  });
}

}  // namespace

Judgement ModelJudge::Judge(const PlanSettings& settings) {
  const Options options = WithSettings(base_, settings);
  std::unique_ptr<HloPassPipeline> pipeline = CreatePipeline("exla-plan", options);
  std::unique_ptr<HloModule> module = ParseHloModule(text_);
  std::vector<PassRecord> records;
  pipeline->Run(module.get(), "", &records);
  Judgement judgement;
  judgement.changed = ChangedBesidesCleanups(records);
  for (PassRecord& record : records) {
    for (SplitLoop& loop : record.loops) judgement.loops.push_back(std::move(loop));
    judgement.recomputed_flops += record.recomputed_flops;
    judgement.program_flops = std::max(judgement.program_flops, record.program_flops);
  }
  judgement.peak_bytes = PredictMemory(*module).peak_bytes();
  judgement.predicted_seconds = PredictTime(*module).seconds;
  return judgement;
}

}  // namespace exla
