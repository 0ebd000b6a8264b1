#include "model/fusion/parallel_tasks.h"

#include <vector>

#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// A thread's share of a memory-bound loop: what an L2 cache holds (256 KiB).
constexpr int64_t kBytesPerThread = 256 << 10;
// A thread's share of a compute-bound loop, in XLA's cost units (100 us of
// work at 2 GHz).
constexpr int64_t kCostPerThread = 100000;
// A loop is outlined when it asks for at least two threads.
constexpr int64_t kMinThreads = 2;

// Whether XLA's assigner considers `instruction` trivially parallel: every
// element of its result is computed independently of the others.
bool RunsAsParallelLoop(const HloInstruction& instruction) {
  if (IsLoopFusible(instruction)) return true;  // what a loop fusion's root is
  switch (instruction.opcode()) {
    case HloOpcode::kGather:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kReshape:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::unordered_set<const HloComputation*> ParallelTaskComputations(const HloModule& module) {
  std::unordered_set<const HloComputation*> result;
  std::vector<const HloComputation*> pending = {module.entry()};
  while (!pending.empty()) {
    const HloComputation* computation = pending.back();
    pending.pop_back();
    if (computation == nullptr || !result.insert(computation).second) continue;
    for (const auto& owned : computation->instructions()) {
      const HloInstruction& instruction = *owned;
      if (instruction.Is(HloOpcode::kWhile)) {
        pending.push_back(instruction.CalledComputation("body"));
      } else if (instruction.Is(HloOpcode::kCall)) {
        for (const HloComputation* callee : instruction.called_computations()) pending.push_back(callee);
      }
    }
  }
  return result;
}

bool OutlinedForParallelTasks(const HloInstruction& instruction, const LoopWork& cost) {
  // An in-place dynamic-update-slice writes only its update, so XLA cannot
  // know how to split its work; a tuple has no elements of its own.
  if (!instruction.shape().IsArray() || instruction.Is(HloOpcode::kDynamicUpdateSlice) ||
      instruction.Is(HloOpcode::kConstant) || instruction.Is(HloOpcode::kRng)) {
    return false;
  }
  if (!RunsAsParallelLoop(instruction)) return false;
  // A result of one element cannot be split over threads.
  if (instruction.shape().ElementCount() < kMinThreads) return false;
  if (cost.flops <= cost.bytes) return cost.bytes >= kMinThreads * kBytesPerThread;
  const int64_t cycles = cost.flops + 2 * cost.transcendentals + 10 * cost.bytes;
  return cycles >= kMinThreads * kCostPerThread;
}

bool InParallelCall(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConvolution)) return false;
  const PrimitiveType type = instruction.shape().element_type();
  return type != PrimitiveType::kF32 && type != PrimitiveType::kF16;
}

}  // namespace exla
