#include "model/simplify/dynamic_slice_of_literals.h"

#include <vector>

#include "ir/computation.h"
#include "model/simplify/call_inliner.h"

namespace exla {
namespace {

bool AtLiteralOffsets(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kDynamicSlice) || instruction.operand_count() < 2 ||
      !instruction.shape().IsArray()) {
    return false;
  }
  for (int i = 1; i < instruction.operand_count(); ++i) {
    if (!instruction.operand(i)->Is(HloOpcode::kConstant)) return false;
  }
  return true;
}

}  // namespace

bool DynamicSliceOfLiterals::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> found;
    for (const auto& instruction : computation->instructions()) {
      if (AtLiteralOffsets(*instruction)) found.push_back(instruction.get());
    }
    for (HloInstruction* dynamic : found) {
      std::vector<SliceBounds> bounds;
      for (int64_t size : dynamic->shape().dims()) bounds.push_back({0, size, 1});
      HloInstruction* slice = computation->Add(HloOpcode::kSlice, dynamic->shape(), {dynamic->operand(0)});
      slice->SetSlice(bounds);
      ReplaceAndRemove(dynamic, slice);
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
