// Bindings of the plan search (search/plan_search.h): plans cross as dicts
// that python/exla/_plan_search.py reads into typed records.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/records.h"
#include "search/plan_search.h"

namespace py = pybind11;

namespace exla {
namespace {

py::dict SettingsData(const PlanSettings& settings) {
  py::dict d;
  d["threshold"] = settings.threshold;
  d["split_size"] = settings.split_size;
  d["large_sums"] = settings.large_sums;
  d["dimensions"] = settings.dimensions;
  return d;
}

py::dict PlanData(const PlanCandidate& plan) {
  py::list loops;
  for (const SplitLoop& loop : plan.loops) loops.append(SplitLoopData(loop));
  py::dict d;
  d["settings"] = SettingsData(plan.settings);
  d["origin"] = PlanOriginName(plan.origin);
  d["memory"] = MemoryData(plan.memory);
  d["predicted_seconds"] = plan.predicted_seconds;
  d["fits"] = plan.fits;
  d["changed"] = plan.changed;
  d["loops"] = loops;
  d["recomputed_flops"] = plan.recomputed_flops;
  d["program_flops"] = plan.program_flops;
  d["seconds"] = plan.seconds;
  return d;
}

py::dict SearchPlansData(const std::string& text, const Options& options, int64_t target,
                         int64_t threshold, int64_t split_size, int max_plans) {
  PlanSearchOptions search;
  search.target = target;
  search.threshold = threshold;
  search.split_size = split_size;
  search.max_plans = max_plans;
  PlanSearchResult result;
  {
    py::gil_scoped_release release;
    result = SearchPlans(text, options, search);
  }
  py::list plans;
  for (const PlanCandidate& plan : result.plans) plans.append(PlanData(plan));
  py::dict d;
  d["before"] = MemoryData(result.before);
  d["seconds_before"] = result.seconds_before;
  d["floor_bytes"] = result.floor_bytes;
  d["plans"] = plans;
  d["seconds"] = result.seconds;
  return d;
}

}  // namespace

void DefinePlanSearch(py::module_& m) {
  m.def("search_plans", &SearchPlansData, py::arg("text"), py::arg("options"), py::arg("target"),
        py::arg("threshold") = 0, py::arg("split_size") = 0, py::arg("max_plans") = 32,
        "Plans of the splitter judged by exla's memory and cost models: {before, "
        "seconds_before, floor_bytes, seconds, plans: [{settings: {threshold, split_size, "
        "large_sums, dimensions}, origin, memory, predicted_seconds, fits, changed, loops, "
        "recomputed_flops, program_flops, seconds}]}.");
}

}  // namespace exla
