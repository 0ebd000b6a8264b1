#include "model/buffers/memory_model.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/parser.h"
#include "model/buffers/aliasing.h"
#include "model/buffers/assignment.h"
#include "model/buffers/buffer_analyses.h"
#include "model/buffers/in_place.h"
#include "model/buffers/leaf_buffers.h"
#include "model/buffers/live_ranges.h"
#include "model/buffers/module_schedule.h"
#include "model/fusion/fused_module.h"
#include "model/simplify/simplification.h"

namespace exla {
namespace {

// XLA's steps from fusion to buffer assignment, over `module` as XLA fuses
// it, with readers that become ready together taken in one order.
ModuleBuffers PredictInOrder(const HloModule& module, const std::set<std::string>& shared_expansions,
                             bool later_readers_first) {
  FusedModule fusion(module);
  const ModuleSchedule schedule = ScheduleModule(module, &fusion, later_readers_first);
  LeafBuffers leaves;
  for (const HloInstruction* instruction : schedule.started) leaves.LeavesOf(instruction);
  const LoopStateBuffers loop_state = AliasBuffers(schedule, &fusion, &leaves);
  const std::vector<int64_t> last_use = LastUses(schedule, &fusion, &leaves);
  InPlaceSharing in_place(module, schedule, &fusion, &leaves, last_use);
  in_place.Run();
  return AssignBuffers({module, schedule, fusion, leaves, last_use, loop_state, in_place, shared_expansions});
}

}  // namespace

ModuleBuffers PredictBuffers(const HloModule& module) {
  // The model predicts the module as XLA fuses it: simplified first.
  SimplifiedModule simplified = SimplifyAsXla(module);
  const HloModule& fused = *simplified.module;
  // Where the order of instructions that become ready together is unknown,
  // the model takes the order that needs more memory: a prediction may err
  // high, not low.
  ModuleBuffers one = PredictInOrder(fused, simplified.shared_expansions, false);
  ModuleBuffers other = PredictInOrder(fused, simplified.shared_expansions, true);
  ModuleBuffers& higher = other.prediction.peak_bytes() > one.prediction.peak_bytes() ? other : one;
  higher.simplified = std::move(simplified.module);
  return std::move(higher);
}

MemoryPrediction PredictMemory(const HloModule& module) {
  return PredictBuffers(module).prediction;
}

MemoryPrediction PredictMemory(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  return PredictMemory(*module);
}

}  // namespace exla
