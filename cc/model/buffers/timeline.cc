// The memory model's timeline (xla_cpu_model.h's PredictMemoryTimeline):
// the lives of the buffers behind a prediction, step by step.
#include <algorithm>
#include <memory>

#include "ir/computation.h"
#include "ir/parser.h"
#include "model/buffers/memory_model.h"
#include "model/xla_cpu_model.h"

namespace exla {
namespace {

const char* KindName(HeapBuffer::Kind kind) {
  switch (kind) {
    case HeapBuffer::Kind::kTupleTable:
      return "tuple table";
    case HeapBuffer::Kind::kScratch:
      return "scratch";
    case HeapBuffer::Kind::kValue:
      break;
  }
  return "value";
}

// Intermediate bytes alive at each step: a difference array over the lives,
// the same sum heap_packing.h's PeakLiveBytes takes the maximum of.
std::vector<int64_t> LiveBytes(const std::vector<HeapBuffer>& temporaries, int64_t steps) {
  for (const HeapBuffer& buffer : temporaries) steps = std::max(steps, buffer.life.end + 1);
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (const HeapBuffer& buffer : temporaries) {
    delta[buffer.life.start] += buffer.life.bytes;
    delta[buffer.life.end + 1] -= buffer.life.bytes;
  }
  std::vector<int64_t> live(static_cast<size_t>(steps), 0);
  int64_t running = 0;
  for (int64_t step = 0; step < steps; ++step) live[step] = running += delta[step];
  return live;
}

// A buffer as it is at `step`: a value buffer that a loop or an in-place
// instruction writes again holds its latest writer's value, so the peak names
// what is really there (the first writer before any has run).
TimelineBuffer Describe(const HeapBuffer& buffer, int64_t step) {
  size_t at = 0;
  while (at + 1 < buffer.writers.size() && buffer.steps[at + 1] <= step) ++at;
  TimelineBuffer named;
  named.kind = KindName(buffer.kind);
  named.bytes = buffer.life.bytes;
  named.start = buffer.life.start;
  named.end = buffer.life.end;
  if (buffer.writers.empty()) return named;
  const HloInstruction* writer = buffer.writers[at];
  named.instruction = writer->name();
  named.computation = writer->parent() != nullptr ? writer->parent()->name() : "";
  named.opcode = std::string(writer->opcode_name());
  if (buffer.shapes[at] != nullptr) named.shape = buffer.shapes[at]->ToString(/*with_layout=*/false);
  return named;
}

std::vector<TimelineBuffer> PeakBuffers(const std::vector<HeapBuffer>& temporaries, int64_t step,
                                        int max_named) {
  std::vector<TimelineBuffer> alive;
  for (const HeapBuffer& buffer : temporaries) {
    if (buffer.life.start <= step && step <= buffer.life.end) alive.push_back(Describe(buffer, step));
  }
  std::sort(alive.begin(), alive.end(), [](const TimelineBuffer& a, const TimelineBuffer& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.instruction < b.instruction;
  });
  if (static_cast<int64_t>(alive.size()) > max_named) alive.resize(std::max(max_named, 0));
  return alive;
}

}  // namespace

MemoryTimeline PredictMemoryTimeline(const HloModule& module, int max_named) {
  const ModuleBuffers buffers = PredictBuffers(module);
  MemoryTimeline timeline;
  timeline.prediction = buffers.prediction;
  const MemoryPrediction& p = buffers.prediction;
  timeline.baseline_bytes = p.argument_bytes + p.output_bytes - p.alias_bytes + p.constant_bytes;
  timeline.live_bytes = LiveBytes(buffers.temporaries, static_cast<int64_t>(buffers.schedule.size()));
  for (size_t step = 0; step < timeline.live_bytes.size(); ++step) {
    const HloInstruction* runs = step < buffers.schedule.size() ? buffers.schedule[step] : nullptr;
    timeline.instructions.push_back(runs != nullptr ? runs->name() : "");
  }
  const int64_t peak = *std::max_element(timeline.live_bytes.begin(), timeline.live_bytes.end());
  for (size_t step = 0; step < timeline.live_bytes.size(); ++step) {
    if (timeline.live_bytes[step] == peak) timeline.peak_steps.push_back(static_cast<int64_t>(step));
  }
  timeline.peak_buffers = PeakBuffers(buffers.temporaries, timeline.peak_steps.front(), max_named);
  timeline.entry = module.entry()->name();
  return timeline;
}

MemoryTimeline PredictMemoryTimeline(const std::string& hlo_text, int max_named) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  return PredictMemoryTimeline(*module, max_named);
}

}  // namespace exla
