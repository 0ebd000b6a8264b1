// Bindings of the plan search (search/plan_search.h): the result crosses as
// the bound PlanSearchResult record (records.cc).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/records.h"
#include "search/plan_search.h"

namespace py = pybind11;

namespace exla {
namespace {

PlanSearchResult SearchPlansOf(const std::string& text, const Options& options, int64_t target,
                               int64_t threshold, int64_t split_size, int max_plans) {
  PlanSearchOptions search;
  search.target = target;
  search.threshold = threshold;
  search.split_size = split_size;
  search.max_plans = max_plans;
  py::gil_scoped_release release;
  return SearchPlans(text, options, search);
}

}  // namespace

void DefinePlanSearch(py::module_& m) {
  m.def("search_plans", &SearchPlansOf, py::arg("text"), py::arg("options"), py::arg("target"),
        py::arg("threshold") = 0, py::arg("split_size") = 0, py::arg("max_plans") = 32,
        "Plans of the splitter judged by exla's memory and cost models: a PlanSearchResult.");
}

}  // namespace exla
