// Bindings of the plan search (search/plan_search.h): judged by exla's
// models, or by a Python callable (XLA's compile); the result crosses as the
// bound PlanSearchResult record (records.cc).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/records.h"
#include "search/plan_search.h"

namespace py = pybind11;

namespace exla {
namespace {

PlanSearchOptions SearchOptions(int64_t target, int64_t threshold, int64_t split_size,
                                int max_plans) {
  PlanSearchOptions search;
  search.target = target;
  search.threshold = threshold;
  search.split_size = split_size;
  search.max_plans = max_plans;
  return search;
}

PlanSearchResult SearchPlansOf(const std::string& text, const Options& options, int64_t target,
                               int64_t threshold, int64_t split_size, int max_plans) {
  const PlanSearchOptions search = SearchOptions(target, threshold, split_size, max_plans);
  py::gil_scoped_release release;
  return SearchPlans(text, options, search);
}

// A judge in Python: `judge(settings: PlanSettings) -> Judgement`. The search
// holds the GIL throughout (the judge needs it between plans), and what the
// judge raises reaches the caller as it was raised.
class CallbackJudge : public PlanJudge {
 public:
  explicit CallbackJudge(std::function<Judgement(const PlanSettings&)> judge)
      : judge_(std::move(judge)) {}
  Judgement Judge(const PlanSettings& settings) override { return judge_(settings); }

 private:
  std::function<Judgement(const PlanSettings&)> judge_;
};

PlanSearchResult SearchPlansJudged(const std::string& text,
                                   std::function<Judgement(const PlanSettings&)> judge,
                                   int64_t floor_bytes, int64_t target, int64_t threshold,
                                   int64_t split_size, int max_plans) {
  PlanSearchOptions search = SearchOptions(target, threshold, split_size, max_plans);
  search.vary_structure = false;  // a compile a plan: the threshold and slice size only
  CallbackJudge callback(std::move(judge));
  return SearchPlans(text, floor_bytes, callback, search);
}

}  // namespace

void DefinePlanSearch(py::module_& m) {
  m.def("search_plans", &SearchPlansOf, py::arg("text"), py::arg("options"), py::arg("target"),
        py::arg("threshold") = 0, py::arg("split_size") = 0, py::arg("max_plans") = 32,
        "Plans of the splitter judged by exla's memory and cost models: a PlanSearchResult.");
  m.def("search_plans_judged", &SearchPlansJudged, py::arg("text"), py::arg("judge"),
        py::arg("floor_bytes"), py::arg("target"), py::arg("threshold") = 0,
        py::arg("split_size") = 0, py::arg("max_plans") = 32,
        "The same search's thresholds and slice sizes judged by `judge(PlanSettings) -> "
        "Judgement` (XLA's compile), above the input's `floor_bytes`: a PlanSearchResult.");
}

}  // namespace exla
