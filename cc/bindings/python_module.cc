// pybind11 bindings: the extension module `exla._exla`.
//
// Everything crosses the boundary as HLO text and plain Python values, so the
// Python side never holds C++ IR objects. The GIL is released while passes run
// so that other Python threads (e.g. TensorFlow's) keep going.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "api/exla.h"
#include "bindings/records.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "model/xla_cpu_model.h"
#include "passes/tensor_splitter/cost.h"
#include "passes/tensor_splitter/sharding_analysis.h"

namespace py = pybind11;

namespace exla {

py::dict SplitLoopData(const SplitLoop& loop) {
  py::dict d;
  d["computation"] = loop.computation;
  d["instruction"] = loop.instruction;
  d["shape"] = loop.shape;
  d["bytes"] = loop.bytes;
  d["extents"] = loop.extents;
  d["dimension"] = loop.dimension;
  d["extent"] = loop.extent;
  d["chunk"] = loop.chunk;
  d["chunks"] = loop.chunks;
  d["remainder"] = loop.remainder;
  d["members"] = loop.members;
  d["recomputed"] = loop.recomputed;
  d["recomputed_flops"] = loop.recomputed_flops;
  d["accumulated"] = loop.accumulated;
  d["description"] = SplitDescription(loop);  // printed from the fields above
  return d;
}

py::dict MemoryData(const MemoryPrediction& prediction) {
  py::dict data;
  data["argument_bytes"] = prediction.argument_bytes;
  data["output_bytes"] = prediction.output_bytes;
  data["alias_bytes"] = prediction.alias_bytes;
  data["temp_bytes"] = prediction.temp_bytes;
  data["live_bytes"] = prediction.live_bytes;
  data["constant_bytes"] = prediction.constant_bytes;
  data["buffers"] = prediction.buffers;
  data["peak_bytes"] = prediction.peak_bytes();
  return data;
}

namespace {

// A pass's results as data: {"loops": [{...}], "unsplit": [{...}],
// "recomputed_flops": n, "program_flops": n}; exla/_splitter_result.py
// reads them into typed records.
py::dict RecordData(const PassRecord& record) {
  py::list loops;
  for (const SplitLoop& loop : record.loops) loops.append(SplitLoopData(loop));
  py::list unsplit;
  for (const UnsplitTensor& tensor : record.unsplit) {
    py::dict d;
    d["computation"] = tensor.computation;
    d["instruction"] = tensor.instruction;
    d["shape"] = tensor.shape;
    d["bytes"] = tensor.bytes;
    d["per_device"] = tensor.per_device;
    d["reason"] = tensor.reason;
    d["size"] = UnsplitSizeText(tensor);
    unsplit.append(d);
  }
  py::dict data;
  data["loops"] = loops;
  data["unsplit"] = unsplit;
  data["recomputed_flops"] = record.recomputed_flops;
  data["program_flops"] = record.program_flops;
  return data;
}

}  // namespace

py::tuple OptimizedData(const std::string& text, const std::vector<PassRecord>& records) {
  py::list py_records;
  for (const PassRecord& record : records) {
    py_records.append(py::make_tuple(record.name, record.changed, record.seconds, record.messages,
                                     RecordData(record)));
  }
  return py::make_tuple(text, py_records);
}

namespace {

py::tuple Optimize(const std::string& text, const Options& options) {
  std::vector<PassRecord> records;
  std::string result;
  {
    py::gil_scoped_release release;
    result = OptimizeHloText(text, options, &records);
  }
  return OptimizedData(result, records);
}

struct LargestTensor {
  int64_t bytes = 0;
  std::string description;
};

// Sizes are what one device holds of a sharded module (the whole value for
// a module on one device).
void Consider(const HloInstruction& instruction, const ShardingAnalysis& sharding,
              LargestTensor* largest) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return;
  int64_t bytes = sharding.DeviceByteSize(instruction);
  if (bytes > largest->bytes || largest->description.empty()) {
    largest->bytes = bytes;
    largest->description =
        instruction.parent()->name() + "/" + instruction.name() + " " + shape.ToString(false);
  }
}

py::dict ModuleSummary(const std::string& text) {
  std::unique_ptr<HloModule> module;
  {
    py::gil_scoped_release release;
    module = ParseHloModule(text);
    VerifyModuleOrThrow(*module, text);  // a summary of a malformed module would mislead
  }
  const ShardingAnalysis sharding(*module);
  LargestTensor overall, entry;
  int64_t instructions = 0;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      ++instructions;
      Consider(*instruction, sharding, &overall);
      if (computation.get() == module->entry()) Consider(*instruction, sharding, &entry);
    }
  }
  py::dict summary;
  summary["name"] = module->name();
  summary["instructions"] = instructions;
  summary["computations"] = static_cast<int64_t>(module->computations().size());
  summary["largest_tensor_bytes"] = overall.bytes;
  summary["largest_tensor"] = overall.description;
  summary["entry_largest_tensor_bytes"] = entry.bytes;
  summary["entry_largest_tensor"] = entry.description;
  summary["sharded"] = sharding.active();
  summary["devices"] = sharding.devices();
  return summary;
}

py::list TensorSizes(const std::string& text) {
  std::unique_ptr<HloModule> module;
  {
    py::gil_scoped_release release;
    module = ParseHloModule(text);
    VerifyModuleOrThrow(*module, text);  // a summary of a malformed module would mislead
  }
  const ShardingAnalysis sharding(*module);
  py::list result;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!instruction->shape().IsArray()) continue;
      result.append(py::make_tuple(computation->name(), instruction->name(),
                                   std::string(instruction->opcode_name()),
                                   sharding.DeviceByteSize(*instruction),
                                   instruction->shape().ToString(false)));
    }
  }
  return result;
}

py::dict Array(const SignatureArray& array) {
  py::dict result;
  result["element_type"] = array.element_type;
  result["dims"] = py::tuple(py::cast(array.dims));
  result["is_array"] = array.is_array;
  result["is_dynamic"] = array.is_dynamic;
  return result;
}

py::dict Signature(const std::string& text) {
  HloSignature signature;
  {
    py::gil_scoped_release release;
    signature = ReadHloSignature(text);
  }
  py::list parameters, outputs, aliases;
  for (const SignatureArray& array : signature.parameters) parameters.append(Array(array));
  for (const SignatureArray& array : signature.outputs) outputs.append(Array(array));
  for (const SignatureAlias& alias : signature.aliases) {
    aliases.append(py::make_tuple(py::tuple(py::cast(alias.output_index)), alias.parameter,
                                  py::tuple(py::cast(alias.parameter_index))));
  }
  py::dict result;
  result["parameters"] = parameters;
  result["outputs"] = outputs;
  result["output_is_tuple"] = signature.output_is_tuple;
  result["aliases"] = aliases;
  return result;
}

// The memory model's figures for a module (PredictMemory, model/xla_cpu_model.h).
py::dict PredictMemoryData(const std::string& text) {
  MemoryPrediction prediction;
  {
    py::gil_scoped_release release;
    std::unique_ptr<HloModule> module = ParseHloModule(text);
    VerifyModuleOrThrow(*module, text);  // a prediction for a malformed module would mislead
    prediction = PredictMemory(*module);
  }
  return MemoryData(prediction);
}

// The timeline as plain values: exla/predict.py reads it into a
// MemoryTimeline dataclass.
py::dict TimelineData(const MemoryTimeline& timeline) {
  py::list buffers;
  for (const TimelineBuffer& buffer : timeline.peak_buffers) {
    py::dict d;
    d["instruction"] = buffer.instruction;
    d["computation"] = buffer.computation;
    d["opcode"] = buffer.opcode;
    d["shape"] = buffer.shape;
    d["kind"] = buffer.kind;
    d["bytes"] = buffer.bytes;
    d["start"] = buffer.start;
    d["end"] = buffer.end;
    buffers.append(d);
  }
  py::dict data;
  data["baseline_bytes"] = timeline.baseline_bytes;
  data["live_bytes"] = timeline.live_bytes;
  data["instructions"] = timeline.instructions;
  data["peak_steps"] = timeline.peak_steps;
  data["peak_buffers"] = buffers;
  data["temp_bytes"] = timeline.prediction.temp_bytes;
  data["live_peak_bytes"] = timeline.prediction.live_bytes;
  data["peak_bytes"] = timeline.prediction.peak_bytes();
  return data;
}

py::dict PredictTimelineData(const std::string& text, int max_named) {
  MemoryTimeline timeline;
  std::string entry;
  {
    py::gil_scoped_release release;
    std::unique_ptr<HloModule> module = ParseHloModule(text);
    VerifyModuleOrThrow(*module, text);  // as for predict_memory
    timeline = PredictMemoryTimeline(*module, max_named);
    entry = module->entry()->name();
  }
  py::dict data = TimelineData(timeline);
  data["entry"] = entry;  // so that a picture names only the other computations
  return data;
}

// The cost model's figures for a module (PredictTime, model/xla_cpu_model.h), as data:
// python/exla/predict.py reads them into TimePrediction.
py::dict PredictTimeData(const std::string& text, const CostConstants& constants) {
  TimePrediction prediction;
  {
    py::gil_scoped_release release;
    std::unique_ptr<HloModule> module = ParseHloModule(text);
    VerifyModuleOrThrow(*module, text);
    prediction = PredictTime(*module, constants);
  }
  py::list loops;
  for (const LoopCost& loop : prediction.loops) {
    py::dict d;
    d["computation"] = loop.computation;
    d["instruction"] = loop.instruction;
    d["trips"] = loop.trips;
    d["trips_known"] = loop.trips_known;
    d["flops"] = loop.flops;
    d["bytes"] = loop.bytes;
    d["seconds"] = loop.seconds;
    loops.append(d);
  }
  py::dict data;
  data["seconds"] = prediction.seconds;
  data["flops"] = prediction.flops;
  data["dot_flops"] = prediction.dot_flops;
  data["transcendentals"] = prediction.transcendentals;
  data["bytes"] = prediction.bytes;
  data["kernels"] = prediction.kernels;
  data["trips"] = prediction.trips;
  data["loops"] = loops;
  return data;
}

}  // namespace
}  // namespace exla

PYBIND11_MODULE(_exla, m) {
  m.doc() = "exla's C++ core: HLO text in, optimised HLO text out.";
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
      .def_readwrite("split_dimensions", &exla::Options::split_dimensions);
  m.def("optimize", &exla::Optimize, py::arg("text"), py::arg("options"),
        "Runs exla's passes; returns (text, [(pass, changed, seconds, messages, data), ...]).");
  m.def("verify", [](const std::string& text) {
    py::gil_scoped_release release;
    exla::VerifyModuleOrThrow(*exla::ParseHloModule(text), text);
  }, py::arg("text"), "Raises ValueError (with line and column) if the module is malformed.");
  m.def("default_pipeline", &exla::DefaultPipeline);
  m.def("available_passes", &exla::AvailablePasses);
  m.def("cleanup_passes", &exla::CleanupPasses,
        "The clean-up passes: a module only they changed counts as unchanged.");
  m.def("read_signature", &exla::Signature, py::arg("text"),
        "The entry signature: {parameters, outputs, output_is_tuple, aliases}; each array is "
        "{element_type, dims, is_array, is_dynamic}, each alias (output_index, parameter, "
        "parameter_index).");
  m.def("module_summary", &exla::ModuleSummary, py::arg("text"),
        "Instruction counts and the largest tensors of an HLO module (what one device holds, "
        "for a sharded module), whether it is sharded and over how many devices.");
  m.def("tensor_sizes", &exla::TensorSizes, py::arg("text"),
        "[(computation, instruction, opcode, bytes, shape)] for every array-shaped instruction; "
        "bytes are what one device holds of a sharded module.");
  m.def("predict_memory", &exla::PredictMemoryData, py::arg("text"),
        "The memory model's prediction of XLA CPU's buffer assignment: {argument_bytes, "
        "output_bytes, alias_bytes, temp_bytes, live_bytes, constant_bytes, buffers, peak_bytes}.");
  m.def("predict_timeline", &exla::PredictTimelineData, py::arg("text"), py::arg("max_named") = 8,
        "The memory model's live bytes at each step of its schedule: {baseline_bytes, live_bytes, "
        "instructions, peak_steps, peak_buffers, temp_bytes, live_peak_bytes, peak_bytes, entry}.");
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
      .def_readwrite("topk_elements_per_second", &exla::CostConstants::topk_elements_per_second);
  m.def("predict_time", &exla::PredictTimeData, py::arg("text"),
        py::arg("constants") = exla::CostConstants(),
        "The cost model's prediction of XLA CPU's time for a module: {seconds, flops, dot_flops, "
        "transcendentals, bytes, kernels, trips, loops: [{computation, instruction, trips, "
        "trips_known, flops, bytes, seconds}]}.");
  exla::DefinePlanSearch(m);
}
