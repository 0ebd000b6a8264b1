#include "model/buffers/live_ranges.h"

#include <algorithm>
#include <utility>

#include "ir/computation.h"
#include "model/fusion/dot_operand_copies.h"

namespace exla {
namespace {

// The step at which `reader` (at `at`) reads `input`: earlier when it
// reads a transposed copy, made as soon as `input` is written.
int64_t TransposedCopyStep(const ModuleSchedule& schedule, const HloInstruction& reader,
                           const HloInstruction& input, int64_t at) {
  if (!reader.Is(HloOpcode::kDot)) return at;
  int64_t copied = at;
  for (int i = 0; i < 2 && i < reader.operand_count(); ++i) {
    if (reader.operand(i) != &input) continue;
    const HloInstruction* buffer = DotOperandBuffer(reader, i);
    if (!DotTransposesOperand(reader, i) || WrittenTransposed(*buffer) || !schedule.start.count(buffer)) return at;
    copied = std::min(copied, schedule.Start(buffer));
  }
  return copied;
}

}  // namespace

std::vector<int64_t> LastUses(const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves) {
  std::vector<int64_t> last_use(leaves->size(), -1);
  const auto use = [&](const HloInstruction* instruction, int64_t step) {
    for (int leaf : leaves->LeavesOf(instruction)) last_use[leaf] = std::max(last_use[leaf], step);
  };
  for (const auto& [step, instruction] : schedule.ByStep()) {
    if (fusion->FoldedAway(instruction)) continue;
    const Holding h = fusion->HoldingOf(instruction);
    if (h == Holding::kOperand && !instruction->Is(HloOpcode::kCall)) continue;
    if (h == Holding::kParameter || h == Holding::kConstant) continue;
    std::vector<std::pair<const HloInstruction*, bool>> inputs;
    fusion->Inputs(instruction, instruction->IsElementwise(), &inputs);
    const int64_t at = instruction->Is(HloOpcode::kWhile) ? schedule.End(instruction) : step;
    for (const auto& input : inputs) use(input.first, TransposedCopyStep(schedule, *instruction, *input.first, at));
  }
  for (const HloComputation* computation : schedule.computations) {
    // A computation's result is read when it returns.
    use(computation->root(), schedule.End(computation->root()) + 1);
  }
  return last_use;
}

}  // namespace exla
