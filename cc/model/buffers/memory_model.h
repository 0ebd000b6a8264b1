// A model of XLA's CPU buffer assignment: predicts, without compiling, the
// memory XLA plans for a module (what `get_compiled_memory_stats()` reports,
// plus the constants the executable embeds).
//
// XLA compiles a module in three steps that decide its memory: fusion
// (elementwise chains become one loop that writes one buffer), a sequential
// schedule of what is left (a memory-aware depth-first order on the CPU) and
// buffer assignment (values whose lives do not overlap share memory, packed
// into one heap by decreasing size, best fit; a temporary that dies before
// an entry result is written takes that result's allocation instead).
// Between fusion and buffer assignment, the CPU backend also outlines large
// loops into calls that run on several threads, which keeps them from
// writing over their operands, and transposes the operands of dots into
// the order its GEMM reads.
// Before fusion, XLA simplifies the module (replaces loops of one trip by
// their bodies, inlines calls, folds literals and reads of tuples, drops
// unread sort arrays, merges common subexpressions, shrinks loop states).
// The model mirrors each step on exla's IR (simplify/simplification.h and
// simplify/loop_simplifier.h what XLA fuses; fusion/instruction_fusion.h
// and fusion/fusion_duplication.h which values get a buffer of their own, dot_operand_copies.h the copies dots read, schedule.h gives
// the order, parallel_tasks.h which loops are outlined, result_lending.h
// which temporaries take a result's allocation, heap_packing.h packs the
// lives and stacks the tuple tables beside the heap), so that a plan can
// be judged in microseconds instead of an XLA compile.
//
// The prediction errs high rather than low: a value the model cannot place
// gets a buffer of its own; a low prediction is what would break a limit.
#ifndef EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_
#define EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/buffers/heap_packing.h"
#include "ir/module.h"

namespace exla {

// The figures of XLA's buffer assignment, predicted. Sizes in bytes.
struct MemoryPrediction {
  int64_t argument_bytes = 0;  // entry parameters
  int64_t output_bytes = 0;    // entry results (tuple index tables included)
  int64_t alias_bytes = 0;     // results that reuse a parameter (input_output_alias)
  int64_t temp_bytes = 0;      // the heap of intermediate values, after packing
  int64_t live_bytes = 0;      // the most intermediate bytes alive at one step
  int64_t constant_bytes = 0;  // literals the executable holds
  int64_t buffers = 0;         // intermediate buffers the heap holds

  // Arguments + outputs - aliased + temporaries + constants: what the
  // program makes the process hold, the figure a memory limit bounds.
  int64_t peak_bytes() const {
    return argument_bytes + output_bytes - alias_bytes + temp_bytes + constant_bytes;
  }
};

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

// The model's buffers and schedule, for analyses that need more than the
// figures (model/buffers/timeline.h draws memory over the schedule from them).
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
  std::shared_ptr<const HloModule> inlined;
};

// Predicts XLA CPU's buffer assignment of `module` (entry parameters as
// XLA's own compile sees them; sizes per device for a module on one device).
MemoryPrediction PredictMemory(const HloModule& module);

// The prediction with the buffers behind it. `module` must outlive the
// result, which points into it.
ModuleBuffers PredictBuffers(const HloModule& module);

// The same for HLO text. Throws std::invalid_argument on malformed text.
MemoryPrediction PredictMemory(const std::string& hlo_text);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_MEMORY_MODEL_H_
