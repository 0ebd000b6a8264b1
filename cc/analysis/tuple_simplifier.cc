#include "analysis/tuple_simplifier.h"

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "passes/dce.h"

namespace exla {
namespace {

// The element `read` takes of a tuple built in place, or nullptr.
HloInstruction* ReadElement(const HloInstruction& read) {
  if (!read.Is(HloOpcode::kGetTupleElement) || !read.operand(0)->Is(HloOpcode::kTuple)) return nullptr;
  const HloInstruction* tuple = read.operand(0);
  const int64_t index = read.IntAttribute("index").value_or(-1);
  return index >= 0 && index < tuple->operand_count() ? tuple->operand(static_cast<int>(index)) : nullptr;
}

}  // namespace

bool HasElementReadsOfTuples(const HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (ReadElement(*instruction) != nullptr) return true;
    }
  }
  return false;
}

void FoldElementReadsOfTuples(HloModule* module) {
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (HloInstruction* element = ReadElement(*instruction)) {
        instruction->ReplaceAllUsesWith(element);
        changed = true;
      }
    }
    if (changed) RemoveDeadInstructions(computation.get());
  }
}

}  // namespace exla
