// The model of XLA's CPU compiler: what XLA CPU will plan for a module, and
// how long the module will run, answered in microseconds without compiling.
//
//   PredictMemory          the figures of XLA's buffer assignment (what
//                          get_compiled_memory_stats() reports) plus the
//                          literals the executable keeps: the peak a memory
//                          limit bounds
//   PredictMemoryTimeline  the same over XLA's schedule: the bytes alive at
//                          each step and the values that hold the peak
//   PredictTime            the time XLA CPU takes to run the module on this
//                          machine (constants in model/cost/cost_constants.h,
//                          calibrated by experiments/calibrate_cost.py)
//
// This is the model's one public header; everything else under cc/model is
// its inside, laid out by the stages of XLA's compile (cc/model/README.md:
// the stages, and where a new XLA behaviour goes). Predictions err high
// rather than low: a value the model cannot place gets a buffer of its
// own, since a low prediction is what would break a limit.
#ifndef EXLA_MODEL_XLA_CPU_MODEL_H_
#define EXLA_MODEL_XLA_CPU_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"
#include "model/cost/cost_constants.h"

namespace exla {

// ---- memory ------------------------------------------------------------

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

// Predicts XLA CPU's buffer assignment of `module` (entry parameters as
// XLA's own compile sees them; sizes per device for a module on one device).
MemoryPrediction PredictMemory(const HloModule& module);

// The same for HLO text. Throws std::invalid_argument on malformed text.
MemoryPrediction PredictMemory(const std::string& hlo_text);

// ---- memory over the schedule -------------------------------------------
//
// How many bytes the model has alive at each step of XLA CPU's sequential
// schedule, and which values they are at the busiest step. A single figure
// (the planned peak) says whether a program fits; a profile over the
// schedule says why. The timeline is the model's own lives, not a separate
// estimate, so it agrees with the figures:
//
//   max over steps of live_bytes == MemoryPrediction::live_bytes
//   MemoryPrediction::temp_bytes >= MemoryPrediction::live_bytes
//
// The second is not an equality: XLA packs the temporaries into one heap at
// fixed offsets, and gaps that no later buffer fits make the heap larger than
// the most bytes ever alive together. The planned peak is therefore
// baseline_bytes + temp_bytes, a little above the top of the live curve.
//
// Steps are those of the model's schedule: one per instruction that is not
// folded away by fusion, plus one where a while loop or call returns; a loop
// body is walked once, as buffer assignment sees it (one iteration).

// One buffer of the heap, named by the value it holds at a given step.
struct TimelineBuffer {
  std::string instruction;  // the instruction whose value the buffer holds
  std::string computation;  // the computation of that instruction
  std::string opcode;
  std::string shape;  // the array's shape; a tuple table's tuple; "" for scratch
  std::string kind;   // "value", "tuple table" or "scratch"
  int64_t bytes = 0;
  int64_t start = 0;  // first step alive
  int64_t end = 0;    // last step alive
};

struct MemoryTimeline {
  MemoryPrediction prediction;
  // Arguments + outputs - aliased outputs + constants: XLA counts them as
  // held for the whole run, so they are the floor under every step.
  int64_t baseline_bytes = 0;
  // Intermediate bytes alive at each step (index = step; step 0 is before
  // the first instruction).
  std::vector<int64_t> live_bytes;
  // The instruction that runs at each step ("" at step 0 and past the end).
  std::vector<std::string> instructions;
  // Every step whose live_bytes is the maximum, ascending.
  std::vector<int64_t> peak_steps;
  // The buffers alive at the first peak step, largest first (ties by name),
  // at most `max_named` of them.
  std::vector<TimelineBuffer> peak_buffers;
  // The entry computation's name: a picture names the computation of a
  // buffer only when it is another one.
  std::string entry;
};

// The memory model's timeline of `module`, naming up to `max_named` buffers
// at the peak.
MemoryTimeline PredictMemoryTimeline(const HloModule& module, int max_named = 8);

// The same for HLO text. Throws std::invalid_argument on malformed text.
MemoryTimeline PredictMemoryTimeline(const std::string& hlo_text, int max_named = 8);

// ---- time --------------------------------------------------------------

// One while loop of the module: its figures for one execution of the loop
// (all its trips; a loop nested in another is counted again on every trip
// of the outer loop in the totals, once here).
struct LoopCost {
  std::string computation;  // where the while instruction is
  std::string instruction;  // the while instruction
  int64_t trips = 1;        // trip count (1 when it cannot be read)
  bool trips_known = false; // read from the condition or known_trip_count
  int64_t flops = 0;
  int64_t bytes = 0;
  double seconds = 0.0;
};

// The prediction for a module; totals count every trip of every loop.
struct TimePrediction {
  int64_t flops = 0;            // all arithmetic (InstructionFlops)
  int64_t dot_flops = 0;        // of which in dots, convolutions, factorisations
  int64_t transcendentals = 0;  // results of exp, log, tanh...
  int64_t bytes = 0;            // read and written by the kernels
  int64_t kernels = 0;          // kernels launched
  int64_t trips = 0;            // while loop trips
  double seconds = 0.0;         // the predicted time
  std::vector<LoopCost> loops;  // in the order of the module's text
};

// Predicts how long XLA CPU takes to run `module` once, with `constants`
// (calibrated on this machine: model/cost/cost_constants.h). How the cost
// model counts: model/cost/cost_model.cc.
TimePrediction PredictTime(const HloModule& module, const CostConstants& constants = {});

}  // namespace exla

#endif  // EXLA_MODEL_XLA_CPU_MODEL_H_
