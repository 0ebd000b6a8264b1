// The memory model's buffers: what PredictMemory (xla_cpu_model.h) adds up,
// for analyses that need more than the figures (timeline.cc draws memory
// over the schedule from them). memory_model.cc runs the model's stages to
// build them: the module simplified as XLA simplifies it
// (simplify/simplification.h), fused (fusion/fused_module.h), scheduled
// (module_schedule.h), its leaves aliased (aliasing.h), their lives
// (live_ranges.h), the values written in place (in_place.h), and XLA's
// buffer assignment of what is left (assignment.h).
#ifndef EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_
#define EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/module.h"
#include "model/buffers/heap_packing.h"
#include "model/xla_cpu_model.h"

namespace exla {

// One buffer of the heap of temporaries, with the instructions that write
// it, so that an analysis can say which value a step's bytes belong to.
struct HeapBuffer {
  enum class Kind {
    kValue,       // an array value (several, when a loop or an in-place op reuses it)
    kTupleTable,  // the pointer table of a tuple-shaped result
    kScratch,     // scratch an expanded instruction holds while it runs
  };
  BufferLife life;
  Kind kind = Kind::kValue;
  // For a value, the instructions that write it, in schedule order, with the
  // shape of what each writes; for a table or scratch, the one it serves.
  std::vector<const HloInstruction*> writers;
  std::vector<const Shape*> shapes;
  std::vector<int64_t> steps;  // the step at which each writer runs
  // Scratch that is one value of XLA's (a copy it makes), placed like a
  // value; other scratch stands for values the model does not place.
  bool one_value = false;
};

// The model's buffers and schedule behind one prediction.
struct ModuleBuffers {
  MemoryPrediction prediction;
  // Exactly the temporaries: the buffers the heap packs and the tuple
  // tables, which XLA allocates beside the heap (heap_packing.h).
  std::vector<HeapBuffer> temporaries;
  // The instruction that runs at each step (index 0 is before the first);
  // a while loop has a second step after its body, where it ends.
  std::vector<const HloInstruction*> schedule;
  // The module the buffers point into: a copy of the one predicted,
  // simplified as XLA simplifies it before it fuses
  // (simplify/simplification.h).
  std::shared_ptr<const HloModule> simplified;
};

// The prediction with the buffers behind it, which point into the result's
// own copy of `module` (`simplified`).
ModuleBuffers PredictBuffers(const HloModule& module);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_
