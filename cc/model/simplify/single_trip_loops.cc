#include "model/simplify/single_trip_loops.h"

#include <memory>
#include <vector>

#include "analysis/loop_trips.h"
#include "ir/computation.h"

namespace exla {

bool SingleTripLoopToCall::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> loops;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kWhile) && TripCount(*instruction) == 1) loops.push_back(instruction.get());
    }
    for (HloInstruction* loop : loops) {
      HloComputation* body = loop->CalledComputation("body");
      if (body == nullptr || loop->operand_count() != 1) continue;
      auto call = std::make_unique<HloInstruction>(loop->name() + ".once", HloOpcode::kCall, loop->shape());
      call->AppendOperand(loop->operand(0));
      call->SetCalledComputation("to_apply", body);
      computation->ReplaceInstruction(loop, computation->AddInstruction(std::move(call)));
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
