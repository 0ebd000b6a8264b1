// The result records of the C++ core as Python classes: one binding per
// struct, each field named once (record_class.h gives the rest). The Python
// modules that return them (exla.predict, exla._splitter_result, ...)
// re-export these classes under the same names.
#include <pybind11/pybind11.h>

#include "api/exla.h"
#include "bindings/record_class.h"
#include "bindings/records.h"
#include "model/xla_cpu_model.h"
#include "passes/tensor_splitter/cost.h"
#include "search/plan_search.h"

namespace py = pybind11;

namespace exla {
namespace {

std::string Where(const std::string& computation, const std::string& instruction) {
  return computation + "/" + instruction;
}

void DefinePassRecords(py::module_& m) {
  RecordClass<SplitLoop>(m, "SplitLoop", "A loop the tensor splitter built over a dimension of one "
                         "tensor (cc/pass/pass_record.h).")
      .Field("computation", &SplitLoop::computation, "where the split tensor is")
      .Field("instruction", &SplitLoop::instruction, "the tensor the loop was built from")
      .Field("shape", &SplitLoop::shape, "its shape, as XLA prints it (no layout)")
      .Field("bytes", &SplitLoop::bytes, "its size (of a tuple: its largest array)")
      .Field("extents", &SplitLoop::extents, "the split array's dimensions")
      .Field("dimension", &SplitLoop::dimension, "the dimension the loop runs over")
      .Field("extent", &SplitLoop::extent, "extents[dimension]")
      .Field("chunk", &SplitLoop::chunk, "the slice of it each trip takes")
      .Field("chunks", &SplitLoop::chunks, "trips of `chunk`")
      .Field("remainder", &SplitLoop::remainder, "the last, shorter slice (0: none)")
      .Field("members", &SplitLoop::members, "instructions moved into the loop")
      .Field("recomputed", &SplitLoop::recomputed, "producers the loop computes again")
      .Field("recomputed_flops", &SplitLoop::recomputed_flops, "their work")
      .Field("accumulated", &SplitLoop::accumulated,
             "sums weighted by a softmax that this loop of its statistics accumulates")
      .Derived("description", &SplitDescription,
               "the splitter's own line about the loop, for people; code reads the fields")
      .Derived("where", [](const SplitLoop& l) { return Where(l.computation, l.instruction); },
               "``computation/instruction``");
  RecordClass<UnsplitTensor>(m, "UnsplitTensor", "An instruction above the threshold that the "
                             "tensor splitter left whole, and why.")
      .Field("computation", &UnsplitTensor::computation, "")
      .Field("instruction", &UnsplitTensor::instruction, "")
      .Field("shape", &UnsplitTensor::shape, "")
      .Field("bytes", &UnsplitTensor::bytes, "what one device holds of it")
      .Field("per_device", &UnsplitTensor::per_device, "`bytes` is one device's share")
      .Field("reason", &UnsplitTensor::reason, "")
      .Derived("size", &UnsplitSizeText,
               "the size as the splitter states it (\"4.0 MB\", \"1.0 MB per device\")")
      .Derived("where", [](const UnsplitTensor& t) { return Where(t.computation, t.instruction); },
               "``computation/instruction``");
  RecordClass<PassRecord>(m, "PassRecord", "What one pass of the C++ pipeline did.")
      .Field("name", &PassRecord::name, "")
      .Field("changed", &PassRecord::changed, "")
      .Field("seconds", &PassRecord::seconds, "")
      .Field("messages", &PassRecord::messages, "what the pass left alone and why, a line each")
      .Field("loops", &PassRecord::loops, "the tensor splitter's loops")
      .Field("unsplit", &PassRecord::unsplit, "the tensors it left above its threshold")
      .Field("recomputed_flops", &PassRecord::recomputed_flops, "the loops' repeated work")
      .Field("program_flops", &PassRecord::program_flops, "the program's own work, for scale")
      .Field("region_members", &PassRecord::region_members, "the splitter's search work");
  RecordClass<OptimizedModule>(m, "OptimizedModule", "What `optimize` returns.")
      .Field("text", &OptimizedModule::text, "the printed module")
      .Field("passes", &OptimizedModule::passes, "one PassRecord per pass run");
}

void DefineModuleRecords(py::module_& m) {
  RecordClass<ModuleSummary>(m, "ModuleSummary", "Instruction counts and the largest tensors "
                             "of a module (cc/api/exla.h).")
      .Field("name", &ModuleSummary::name, "")
      .Field("instructions", &ModuleSummary::instructions, "")
      .Field("computations", &ModuleSummary::computations, "")
      .Field("largest_tensor_bytes", &ModuleSummary::largest_tensor_bytes, "")
      .Field("largest_tensor", &ModuleSummary::largest_tensor, "computation/instruction shape")
      .Field("entry_largest_tensor_bytes", &ModuleSummary::entry_largest_tensor_bytes, "")
      .Field("entry_largest_tensor", &ModuleSummary::entry_largest_tensor, "")
      .Field("sharded", &ModuleSummary::sharded, "")
      .Field("devices", &ModuleSummary::devices, "");
  RecordClass<TensorSize>(m, "TensorSize", "One array-shaped instruction and its size.")
      .Field("computation", &TensorSize::computation, "")
      .Field("instruction", &TensorSize::instruction, "")
      .Field("opcode", &TensorSize::opcode, "")
      .Field("bytes", &TensorSize::bytes, "what one device holds of it")
      .Field("shape", &TensorSize::shape, "")
      .Field("output", &TensorSize::output, "a leaf of the entry's result: an output's buffer");
  RecordClass<SignatureArray>(m, "SignatureArray", "One array of an entry signature.")
      .Field("element_type", &SignatureArray::element_type, "XLA's name: f32, pred, token...")
      .Field("dims", &SignatureArray::dims, "")
      .Field("is_array", &SignatureArray::is_array, "false for a token or a tuple parameter")
      .Field("is_dynamic", &SignatureArray::is_dynamic, "");
  RecordClass<SignatureAlias>(m, "SignatureAlias", "One entry of input_output_alias.")
      .Field("output_index", &SignatureAlias::output_index, "() for a non-tuple result")
      .Field("parameter", &SignatureAlias::parameter, "")
      .Field("parameter_index", &SignatureAlias::parameter_index, "() for the whole parameter");
  RecordClass<HloSignature>(m, "RawSignature", "The entry computation's calling convention "
                            "as the parser reads it (cc/api/exla.h: HloSignature).")
      .Field("parameters", &HloSignature::parameters, "")
      .Field("outputs", &HloSignature::outputs, "")
      .Field("output_is_tuple", &HloSignature::output_is_tuple, "")
      .Field("aliases", &HloSignature::aliases, "");
}

void DefineMemoryRecords(py::module_& m) {
  RecordClass<MemoryPrediction>(m, "MemoryPrediction", "The memory model's prediction of XLA "
                                "CPU's buffer assignment, in bytes (model/xla_cpu_model.h).")
      .Field("argument_bytes", &MemoryPrediction::argument_bytes, "the entry parameters")
      .Field("output_bytes", &MemoryPrediction::output_bytes,
             "the results (tuple index tables included)")
      .Field("alias_bytes", &MemoryPrediction::alias_bytes,
             "results that reuse a parameter's buffer (input_output_alias)")
      .Field("temp_bytes", &MemoryPrediction::temp_bytes,
             "the heap of intermediate values after packing")
      .Field("live_bytes", &MemoryPrediction::live_bytes,
             "the most intermediate bytes alive at one step (at most temp_bytes)")
      .Field("constant_bytes", &MemoryPrediction::constant_bytes, "literals the executable holds")
      .Field("buffers", &MemoryPrediction::buffers, "intermediate buffers in the heap")
      .Derived("peak_bytes", &MemoryPrediction::peak_bytes,
               "arguments + outputs - aliased + temporaries + constants");
  RecordClass<TimelineBuffer>(m, "PeakBuffer", "One buffer of the heap alive at a timeline's "
                              "peak (model/xla_cpu_model.h: TimelineBuffer).")
      .Field("instruction", &TimelineBuffer::instruction,
             "the instruction whose value it holds at the peak (the latest writer by then)")
      .Field("computation", &TimelineBuffer::computation, "that instruction's computation")
      .Field("opcode", &TimelineBuffer::opcode, "")
      .Field("shape", &TimelineBuffer::shape, "the array's shape; a tuple table's tuple; '' for "
             "scratch")
      .Field("kind", &TimelineBuffer::kind, "'value', 'tuple table' or 'scratch'")
      .Field("bytes", &TimelineBuffer::bytes, "")
      .Field("start", &TimelineBuffer::start, "the first schedule step at which it is alive")
      .Field("end", &TimelineBuffer::end, "the last");
  RecordClass<MemoryTimeline>(m, "MemoryTimeline", "The memory model's intermediate bytes alive "
                              "at each step of XLA's schedule (model/xla_cpu_model.h).")
      .Field("prediction", &MemoryTimeline::prediction, "the MemoryPrediction of the module")
      .Field("baseline_bytes", &MemoryTimeline::baseline_bytes,
             "arguments + outputs - aliased + constants: the floor under every step")
      .Field("live_bytes", &MemoryTimeline::live_bytes,
             "intermediate bytes alive at each step (step 0: before the first instruction)")
      .Field("instructions", &MemoryTimeline::instructions, "the instruction run at each step")
      .Field("peak_steps", &MemoryTimeline::peak_steps, "every step where live_bytes peaks")
      .Field("peak_buffers", &MemoryTimeline::peak_buffers,
             "the largest buffers alive at the first peak step, largest first")
      .Field("entry", &MemoryTimeline::entry, "the entry computation's name")
      .Derived("temp_bytes", [](const MemoryTimeline& t) { return t.prediction.temp_bytes; },
               "the heap after packing: at least the top of live_bytes")
      .Derived("live_peak_bytes", [](const MemoryTimeline& t) { return t.prediction.live_bytes; },
               "the top of live_bytes")
      .Derived("peak_bytes", [](const MemoryTimeline& t) { return t.prediction.peak_bytes(); },
               "the predicted planned peak, baseline_bytes + temp_bytes")
      .Derived("steps", [](const MemoryTimeline& t) { return t.live_bytes.size(); },
               "the number of steps, step 0 included")
      .Derived("total_bytes", [](const MemoryTimeline& t) {
                 std::vector<int64_t> total;
                 for (int64_t live : t.live_bytes) total.push_back(t.baseline_bytes + live);
                 return record_internal::ToPython(total);
               }, "baseline_bytes + live_bytes at each step: what the process holds");
}

void DefineTimeRecords(py::module_& m) {
  RecordClass<LoopCost>(m, "LoopTime", "One while loop in the cost model's prediction: all its "
                        "trips, one execution (model/xla_cpu_model.h: LoopCost).")
      .Field("computation", &LoopCost::computation, "where the loop is")
      .Field("instruction", &LoopCost::instruction, "the while instruction")
      .Field("trips", &LoopCost::trips, "its trip count (1 when it cannot be read)")
      .Field("trips_known", &LoopCost::trips_known, "whether the count was read")
      .Field("flops", &LoopCost::flops, "arithmetic over all trips")
      .Field("bytes", &LoopCost::bytes, "bytes its kernels read and write over all trips")
      .Field("seconds", &LoopCost::seconds, "predicted time over all trips");
  RecordClass<TimePrediction>(m, "TimePrediction", "The cost model's prediction of one run of a "
                              "module on XLA's CPU backend; totals count every trip.")
      .Field("seconds", &TimePrediction::seconds, "the predicted time")
      .Field("flops", &TimePrediction::flops, "all arithmetic")
      .Field("dot_flops", &TimePrediction::dot_flops,
             "of which in matrix products (and convolutions, factorisations)")
      .Field("transcendentals", &TimePrediction::transcendentals, "results of exp, log, tanh...")
      .Field("bytes", &TimePrediction::bytes, "read and written by the kernels XLA runs")
      .Field("kernels", &TimePrediction::kernels, "kernels launched")
      .Field("trips", &TimePrediction::trips, "while-loop trips")
      .Field("loops", &TimePrediction::loops, "each loop's figures, in the module's order");
}

void DefinePlanRecords(py::module_& m) {
  RecordClass<PlanSettings>(m, "PlanSettings", "The splitter settings of one plan "
                            "(search/plan_search.h); 0 is none.")
      .Field("threshold", &PlanSettings::threshold, "the per-tensor threshold (0: the user's)")
      .Field("split_size", &PlanSettings::split_size, "the slice size (0: the splitter's default)")
      .Field("large_sums", &PlanSettings::large_sums, "sums may stay above the threshold")
      .Field("dimensions", &PlanSettings::dimensions,
             "{computation/instruction: dimension, KEEP_WHOLE or TWO_PASS}")
      .Field("tile_size", &PlanSettings::tile_size,
             "tiles of the loop bodies, running state in place (0: none)");
  // A PlanCandidate is a Judgement with the search's own fields: the same
  // fields, then those.
  const auto judgement_fields = [](auto&& record) -> decltype(auto) {
    return record
        .Field("peak_bytes", &Judgement::peak_bytes, "the planned peak: the judge's figure")
        .Field("predicted_seconds", &Judgement::predicted_seconds, "the cost model's time")
        .Field("changed", &Judgement::changed, "a pass other than a clean-up changed it")
        .Field("loops", &Judgement::loops, "the splitter's loops")
        .Field("recomputed_flops", &Judgement::recomputed_flops, "what they compute again")
        .Field("program_flops", &Judgement::program_flops, "the input program's work");
  };
  judgement_fields(RecordClass<Judgement>(m, "Judgement",
                                          "One plan run and judged (search/plan_judge.h)."));
  judgement_fields(RecordClass<PlanCandidate>(m, "PlanCandidate",
                                              "One plan and what its judge says of it."))
      .Field("settings", &PlanCandidate::settings, "")
      .Field("fits", &PlanCandidate::fits, "the peak is within the search's target")
      .Field("seconds", &PlanCandidate::seconds, "the pipeline and the judge, for this plan")
      .Converted("origin", &PlanCandidate::origin,
                 [](PlanOrigin origin) { return std::string(PlanOriginName(origin)); },
                 [](py::handle name) { return PlanOriginNamed(name.cast<std::string>()); },
                 "why the search tried it ('halving', 'other dimension', ...)");
  RecordClass<PlanSearchResult>(m, "PlanSearchResult", "Every plan the C++ search considered.")
      .Field("before", &PlanSearchResult::before, "the input module's MemoryPrediction")
      .Field("seconds_before", &PlanSearchResult::seconds_before, "its predicted time")
      .Field("floor_bytes", &PlanSearchResult::floor_bytes,
             "arguments + outputs - aliased: no plan goes below")
      .Field("plans", &PlanSearchResult::plans, "in the order considered")
      .Field("seconds", &PlanSearchResult::seconds, "the whole search");
}

}  // namespace

void DefineRecords(py::module_& m) {
  DefinePassRecords(m);
  DefineModuleRecords(m);
  DefineMemoryRecords(m);
  DefineTimeRecords(m);
  DefinePlanRecords(m);
}

}  // namespace exla
