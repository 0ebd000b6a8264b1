// pybind11 bindings: the extension module `exla._exla`.
//
// Everything crosses the boundary as HLO text, plain Python values and the
// result records bound in records.cc, so the Python side never holds C++ IR
// objects. The GIL is released while passes run so that other Python threads
// (e.g. TensorFlow's) keep going.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "api/exla.h"
#include "bindings/records.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "model/xla_cpu_model.h"

namespace py = pybind11;

namespace exla {
namespace {

OptimizedModule Optimize(const std::string& text, const Options& options) {
  py::gil_scoped_release release;
  OptimizedModule optimized;
  optimized.text = OptimizeHloText(text, options, &optimized.passes);
  return optimized;
}

// A module the model reads is verified first: a prediction for a malformed
// module would mislead.
std::unique_ptr<HloModule> ParseVerified(const std::string& text) {
  std::unique_ptr<HloModule> module = ParseHloModule(text);
  VerifyModuleOrThrow(*module, text);
  return module;
}

MemoryPrediction PredictMemoryOf(const std::string& text) {
  py::gil_scoped_release release;
  return PredictMemory(*ParseVerified(text));
}

MemoryTimeline PredictTimelineOf(const std::string& text, int max_named) {
  py::gil_scoped_release release;
  return PredictMemoryTimeline(*ParseVerified(text), max_named);
}

TimePrediction PredictTimeOf(const std::string& text, const CostConstants& constants) {
  py::gil_scoped_release release;
  return PredictTime(*ParseVerified(text), constants);
}

}  // namespace
}  // namespace exla

PYBIND11_MODULE(_exla, m) {
  m.doc() = "exla's C++ core: HLO text in, optimised HLO text out.";
  exla::DefineRecords(m);
  m.def("round_trip", [](const std::string& text) {
    py::gil_scoped_release release;
    return exla::RoundTripHloText(text);
  }, py::arg("text"), "Parses HLO text and prints it again.");
  // exla::Options under the Python names of python/exla/options.py, where
  // each setting is declared; the Python side copies the declared settings
  // into this object by name.
  py::class_<exla::Options>(m, "Options", "The C++ core's exla::Options (cc/api/exla.h).")
      .def(py::init<>())
      .def_readwrite("threshold", &exla::Options::tensor_size_threshold)
      .def_readwrite("split_size", &exla::Options::tensor_split_size)
      // Empty: the default pipeline; an empty list given on purpose is refused.
      .def_property(
          "passes", [](const exla::Options& o) { return o.passes; },
          [](exla::Options& o, const std::vector<std::string>& passes) {
            if (passes.empty()) {
              throw std::invalid_argument(
                  "the pass list is empty; omit it to run the default pipeline");
            }
            o.passes = passes;
          })
      .def_readwrite("dump_dir", &exla::Options::dump_dir)
      .def_readwrite("fast_math", &exla::Options::fast_math)
      .def_readwrite("large_sums", &exla::Options::large_sums)
      .def_readwrite("in_place_loop_state", &exla::Options::in_place_loop_state)
      .def_readwrite("tile_size", &exla::Options::tensor_tile_size)
      .def_readwrite("split_dimensions", &exla::Options::split_dimensions);
  m.def("optimize", &exla::Optimize, py::arg("text"), py::arg("options"),
        "Runs exla's passes: an OptimizedModule (text, passes: [PassRecord]).");
  m.def("verify", [](const std::string& text) {
    py::gil_scoped_release release;
    exla::VerifyModuleOrThrow(*exla::ParseHloModule(text), text);
  }, py::arg("text"), "Raises ValueError (with line and column) if the module is malformed.");
  m.def("default_pipeline", &exla::DefaultPipeline);
  m.def("available_passes", &exla::AvailablePasses);
  m.def("cleanup_passes", &exla::CleanupPasses,
        "The clean-up passes: a module only they changed counts as unchanged.");
  m.def("read_signature", &exla::ReadHloSignature, py::arg("text"),
        py::call_guard<py::gil_scoped_release>(), "The entry signature: a RawSignature.");
  m.def("module_summary", &exla::SummarizeModule, py::arg("text"),
        py::call_guard<py::gil_scoped_release>(),
        "Instruction counts and the largest tensors of an HLO module: a ModuleSummary.");
  m.def("tensor_sizes", &exla::TensorSizes, py::arg("text"),
        py::call_guard<py::gil_scoped_release>(),
        "A TensorSize for every array-shaped instruction; bytes are what one device holds.");
  m.def("predict_memory", &exla::PredictMemoryOf, py::arg("text"),
        "The memory model's prediction of XLA CPU's buffer assignment: a MemoryPrediction.");
  m.def("predict_timeline", &exla::PredictTimelineOf, py::arg("text"), py::arg("max_named") = 8,
        "The memory model's live bytes at each step of its schedule: a MemoryTimeline.");
  // The calibrated constants are their defaults (model/cost/cost_constants.h).
  py::class_<exla::CostConstants>(m, "CostConstants",
                                  "The cost model's rates and overheads (model/cost/cost_constants.h).")
      .def(py::init<>())
      .def_readwrite("dot_f32_flops_per_second", &exla::CostConstants::dot_f32_flops_per_second)
      .def_readwrite("dot_f64_flops_per_second", &exla::CostConstants::dot_f64_flops_per_second)
      .def_readwrite("dot_thin_width", &exla::CostConstants::dot_thin_width)
      .def_readwrite("dot_thin_exponent", &exla::CostConstants::dot_thin_exponent)
      .def_readwrite("elementwise_per_second", &exla::CostConstants::elementwise_per_second)
      .def_readwrite("transcendental_per_second", &exla::CostConstants::transcendental_per_second)
      .def_readwrite("bytes_per_second", &exla::CostConstants::bytes_per_second)
      .def_readwrite("op_seconds", &exla::CostConstants::op_seconds)
      .def_readwrite("trip_seconds", &exla::CostConstants::trip_seconds)
      .def_readwrite("update_scan_elements_per_second",
                     &exla::CostConstants::update_scan_elements_per_second)
      .def_readwrite("cache_bytes", &exla::CostConstants::cache_bytes)
      .def_readwrite("cache_bytes_per_second", &exla::CostConstants::cache_bytes_per_second)
      .def_readwrite("sort_comparisons_per_second",
                     &exla::CostConstants::sort_comparisons_per_second)
      .def_readwrite("topk_elements_per_second", &exla::CostConstants::topk_elements_per_second)
      .def_readwrite("transpose_cache_bytes", &exla::CostConstants::transpose_cache_bytes)
      .def_readwrite("transpose_lines_cache_bytes", &exla::CostConstants::transpose_lines_cache_bytes)
      .def_readwrite("transpose_cached_bytes_per_second",
                     &exla::CostConstants::transpose_cached_bytes_per_second)
      .def_readwrite("transpose_bytes_per_second", &exla::CostConstants::transpose_bytes_per_second);
  m.def("predict_time", &exla::PredictTimeOf, py::arg("text"),
        py::arg("constants") = exla::CostConstants(),
        "The cost model's prediction of XLA CPU's time for a module: a TimePrediction.");
  exla::DefinePlanSearch(m);
}
