// What the binding files share: pass results and plans as plain Python
// values (dicts, lists, tuples), never C++ objects.
#ifndef EXLA_BINDINGS_RECORDS_H_
#define EXLA_BINDINGS_RECORDS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "api/exla.h"
#include "model/xla_cpu_model.h"

namespace exla {

// A loop the splitter built: {computation, instruction, shape, bytes,
// dimension, extent, chunk, chunks, remainder, members, recomputed,
// recomputed_flops, accumulated, description}.
pybind11::dict SplitLoopData(const SplitLoop& loop);

// The memory model's figures: {argument_bytes, output_bytes, alias_bytes,
// temp_bytes, live_bytes, constant_bytes, buffers, peak_bytes}.
pybind11::dict MemoryData(const MemoryPrediction& prediction);

// What `optimize` returns: (text, [(pass, changed, seconds, messages, data), ...]).
pybind11::tuple OptimizedData(const std::string& text, const std::vector<PassRecord>& records);

// Adds search_plans (plan_search_module.cc) to the module.
void DefinePlanSearch(pybind11::module_& m);

}  // namespace exla

#endif  // EXLA_BINDINGS_RECORDS_H_
