#include "model/fusion/globally_unfusible.h"

#include <unordered_set>

#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// How far the search for written-out values between a producer and its
// readers goes: past it, the producer is taken as fusible (the old rule).
constexpr int kMaxPathDepth = 12;

// A broadcast, an iota or a scalar literal is cheap to recompute at any
// index: XLA does not count it as an input a copy would read again.
bool NegligibleInput(const HloInstruction& operand) {
  if (operand.Is(HloOpcode::kBroadcast) || operand.Is(HloOpcode::kIota)) return true;
  return operand.Is(HloOpcode::kConstant) && operand.shape().IsArray() && operand.shape().ElementCount() == 1;
}

// The rank of `shape` without its dimensions of size 1.
int64_t TrueRank(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  int64_t rank = 0;
  for (int d = 0; d < shape.rank(); ++d) rank += shape.dim(d) != 1 ? 1 : 0;
  return rank;
}

// At most one operand as large (in true rank) as the producer's result:
// a copy per reader reads no more memory than the reader would.
bool EffectivelyAtMostUnary(const HloInstruction& producer) {
  const int64_t rank = TrueRank(producer.shape());
  int large = 0;
  for (const HloInstruction* operand : producer.operands()) {
    if (!NegligibleInput(*operand) && TrueRank(operand->shape()) >= rank) ++large;
  }
  return large <= 1;
}

// The producer reads no more elements than it writes.
bool ReadsNoMoreThanItWrites(const HloInstruction& producer) {
  if (!producer.shape().IsArray()) return false;
  int64_t read = 0;
  std::unordered_set<const HloInstruction*> seen;
  for (const HloInstruction* operand : producer.operands()) {
    if (seen.insert(operand).second && operand->shape().IsArray()) read += operand->shape().ElementCount();
  }
  return read <= producer.shape().ElementCount();
}

// Whether `value` is computed from `producer` (within kMaxPathDepth steps).
bool ComputedFrom(const HloInstruction& value, const HloInstruction& producer, int depth) {
  if (&value == &producer) return true;
  if (depth > kMaxPathDepth) return false;
  for (const HloInstruction* operand : value.operands()) {
    if (ComputedFrom(*operand, producer, depth + 1)) return true;
  }
  return false;
}

// Whether every value between `producer` and `consumer` is folded into
// `consumer`'s loop (XLA's CanFuseOnAllPaths).
bool FusedOnAllPaths(const HloInstruction& producer, const HloInstruction& consumer, int depth) {
  if (depth > kMaxPathDepth) return true;
  for (const HloInstruction* operand : consumer.operands()) {
    if (operand == &producer || !ComputedFrom(*operand, producer, 0)) continue;
    const Holding holding = HoldingOf(*operand);
    const bool view = holding == Holding::kOperand && !operand->Is(HloOpcode::kTuple) &&
                      !operand->Is(HloOpcode::kGetTupleElement);
    if (holding != Holding::kFused && !view) return false;
    if (!FusedOnAllPaths(producer, *operand, depth + 1)) return false;
  }
  return true;
}

}  // namespace

bool CopiesReadMore(const HloInstruction& producer) {
  return !EffectivelyAtMostUnary(producer) && !ReadsNoMoreThanItWrites(producer);
}

bool GloballyUnfusible(const HloInstruction& producer) {
  if (producer.user_count() < 2 || !CopiesReadMore(producer)) return false;
  for (const HloInstruction* user : producer.users()) {
    if (!FusedOnAllPaths(producer, *user, 0)) return true;
  }
  return false;
}

}  // namespace exla
