#include "model/fusion/concatenate_fusion.h"

#include <vector>

namespace exla {
namespace {

// XLA CPU's limits (cpu_instruction_fusion.cc).
constexpr int kMaxFusedConcatenateOperands = 8;
constexpr int64_t kMinUnfusedMinorLength = 128;

}  // namespace

bool IsUnfusedConcatenate(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConcatenate) || !instruction.shape().IsArray()) return false;
  if (instruction.operand_count() > kMaxFusedConcatenateOperands) return true;
  const Shape& shape = instruction.shape();
  if (shape.rank() <= 1) return false;  // a vector is always fused
  const std::vector<int64_t> dimensions = instruction.dimensions();
  const std::vector<int64_t> minor_to_major = shape.MinorToMajor();
  if (dimensions.size() != 1 || minor_to_major.empty()) return false;
  const int64_t dimension = dimensions[0];
  return dimension == minor_to_major[0] && shape.dim(static_cast<int>(dimension)) >= kMinUnfusedMinorLength;
}

}  // namespace exla
