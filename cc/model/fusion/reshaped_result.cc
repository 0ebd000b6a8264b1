#include "model/fusion/reshaped_result.h"

#include "model/fusion/instruction_fusion.h"

namespace exla {

bool WrittenReshaped(const HloInstruction& producer) {
  if (producer.user_count() != 1 || !IsLoopFusible(producer) || HoldingOf(producer) != Holding::kOwn) return false;
  const HloInstruction& reader = *producer.users()[0];
  if (!reader.Is(HloOpcode::kReshape) && !reader.Is(HloOpcode::kBitcast)) return false;
  if (HoldingOf(reader) != Holding::kOperand || !reader.shape().IsArray() || !producer.shape().IsArray()) return false;
  return reader.shape().dims() != producer.shape().dims();
}

}  // namespace exla
