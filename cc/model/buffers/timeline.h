// Memory over XLA's schedule: how many bytes the memory model has alive at
// each step of XLA CPU's sequential schedule, and which values they are at
// the busiest step.
//
// A single figure (the planned peak) says whether a program fits; a profile
// over the schedule says why: which instructions are running when memory is
// highest and which tensors hold it. The timeline is the model's own lives
// (memory_model.h), not a separate estimate, so it agrees with the figures:
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
#ifndef EXLA_MODEL_BUFFERS_TIMELINE_H_
#define EXLA_MODEL_BUFFERS_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/buffers/memory_model.h"
#include "ir/module.h"

namespace exla {

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
};

// The memory model's timeline of `module`, naming up to `max_named` buffers
// at the peak.
MemoryTimeline PredictMemoryTimeline(const HloModule& module, int max_named = 8);

// The same for HLO text. Throws std::invalid_argument on malformed text.
MemoryTimeline PredictMemoryTimeline(const std::string& hlo_text, int max_named = 8);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_TIMELINE_H_
