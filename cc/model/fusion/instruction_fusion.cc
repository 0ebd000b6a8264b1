#include "model/fusion/instruction_fusion.h"

#include <algorithm>
#include <vector>

#include "analysis/flops.h"
#include "ir/computation.h"
#include "ir/pattern_matcher.h"
#include "model/expand/convolution_layout.h"
#include "model/expand/tree_reduction.h"
#include "model/fusion/concatenate_fusion.h"
#include "model/fusion/globally_unfusible.h"
#include "model/fusion/output_fusion.h"
#include "model/simplify/xla_topk.h"

namespace exla {
namespace {

// How far ReadersShareOneLoop follows fused readers before it gives up
// (and keeps the value in a buffer).
constexpr int kMaxLoopSearchDepth = 12;

// Instructions that are a view of their operand's buffer: a reshape of a
// row-major array is a bitcast once XLA has assigned layouts, a tuple is a
// table of its operands' buffers, exla's bridge removes copies before XLA
// sees the module, XLA's simplifier removes identity transposes, slices
// and conversions.
bool IsView(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape:
    case HloOpcode::kCopy:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kSetDimensionSize:  // bounds a static dimension: no data moves
      return true;
    case HloOpcode::kTranspose:  // by the identity permutation,
    case HloOpcode::kSlice:      // of the whole operand,
    case HloOpcode::kConvert:    // or to its own type: XLA removes it
      return m::MovesNoElement(&instruction);
    default:
      return false;
  }
}

bool FusesMatrixOfDot(const HloInstruction& dot, int operand_index);

// A transpose read only by dots and convolutions is folded into their
// dimension numbers (XLA's transpose folding): no buffer. Not where a dot
// is a small matrix-vector product that reads the transpose as its
// matrix: XLA's simplifier makes that product a multiply and a reduce
// (dot strength reduction), a loop into which the transpose and its
// producers fuse.
bool FoldedIntoDots(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kTranspose) || instruction.users().empty()) return false;
  if (instruction.parent()->root() == &instruction) return false;
  for (const HloInstruction* user : instruction.users()) {
    if (!user->Is(HloOpcode::kDot) && !user->Is(HloOpcode::kConvolution)) return false;
    for (int i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == &instruction && FusesMatrixOfDot(*user, i)) return false;
    }
  }
  return true;
}

// XLA CPU computes a matrix-vector product (one side's free dimensions all
// of size 1, that side small) as a loop of its own, into which it fuses the
// producers of the matrix; other dots call a GEMM that reads buffers.
constexpr int64_t kSmallVectorBytes = 16 * 1024;

bool FusesMatrixOfDot(const HloInstruction& dot, int operand_index) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2) return false;
  const DotDimensions dims = dot.dot_dimensions();
  if (!dims.lhs_batch.empty()) return false;
  const HloInstruction* vector = dot.operand(1 - operand_index);
  const std::vector<int64_t>& contracting =
      operand_index == 0 ? dims.rhs_contracting : dims.lhs_contracting;
  int64_t free = vector->shape().ElementCount();
  for (int64_t d : contracting) free /= std::max<int64_t>(1, vector->shape().dim(static_cast<int>(d)));
  return free == 1 && vector->shape().ByteSize() <= kSmallVectorBytes;
}

// Consumers that read an element of the operand more than once per element
// they write: folding an expensive producer into them would recompute it.
bool ReusesOperandElements(const HloInstruction& consumer, int operand_index) {
  if (FusesMatrixOfDot(consumer, operand_index)) return false;
  switch (consumer.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kGather:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool FusesOperand(const HloInstruction& consumer, int operand_index) {
  // A matrix-vector product fused into the add that reads it is an output
  // fusion, which takes in no producer but the dot (output_fusion.h).
  if (IsOutputFusedIntoAdd(consumer)) return false;
  if (TakesOutputFusedDot(consumer)) return IsOutputFusedOperand(consumer, operand_index);
  // Once the matrix is fused, the dot is a loop fusion that also takes in
  // the producers of the vector.
  if (FusesMatrixOfDot(consumer, 0) || FusesMatrixOfDot(consumer, 1)) return true;
  // XLA CPU fuses after layout assignment: an operand a convolution needs in
  // another layout is read through a transposing copy, a loop that takes in
  // the operand's producers (transpose_copy_fusion).
  if (consumer.Is(HloOpcode::kConvolution)) return LayoutCopyOfOperandBytes(consumer, operand_index) > 0;
  if (!FusesProducers(consumer)) return false;
  // A tree reduction's reduce-window reads its input from memory.
  if (IsTreeReduction(consumer)) return operand_index >= consumer.operand_count() / 2;
  switch (consumer.opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kScatter:
      // Operand 0 is the buffer written in place.
      return operand_index != 0;
    case HloOpcode::kGather:
      return operand_index != 0;  // the gathered array is read at random
    default:
      return true;
  }
}

namespace {

// Whether the loop that `value` is folded into reads each of its elements
// more than once: some reader on the way to the loop's result reuses them
// (a broadcast that widens it). XLA keeps, per fusion, the operands it
// reuses; fusing a reused producer makes its operands reused in turn
// (InstructionFusion::UpdateReusedOperandsForFusion), so an expensive value
// further up is not fused into a loop that broadcasts what it feeds.
bool FoldedIntoReusingLoop(const HloInstruction& value) {
  if (value.parent()->root() == &value || value.users().empty()) return false;
  if (HoldingOf(value) != Holding::kFused && !IsView(value)) return false;
  for (const HloInstruction* user : value.users()) {
    for (int i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == &value && ReusesOperandElements(*user, i)) return true;
    }
    if (FoldedIntoReusingLoop(*user)) return true;
  }
  return false;
}

// Whether every use of `producer` through `user` (looking through views) is
// folded into a loop, and none reuses elements when `expensive`.
bool FusedThrough(const HloInstruction& producer, const HloInstruction& user, bool expensive) {
  if (user.Is(HloOpcode::kTuple) || user.Is(HloOpcode::kGetTupleElement)) return false;
  if (FoldedIntoDots(user)) return false;  // the dot reads the producer's buffer
  if (IsView(user)) {
    if (user.parent()->root() == &user) return false;  // the view is a result: written out
    for (const HloInstruction* next : user.users()) {
      if (!FusedThrough(user, *next, expensive)) return false;
    }
    return true;
  }
  for (int i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) != &producer) continue;
    if (!FusesOperand(user, i)) return false;
    if (expensive && (ReusesOperandElements(user, i) || FoldedIntoReusingLoop(user))) return false;
  }
  return true;
}

// Whether every loop `value`'s buffer-less readers lead to is `*loop` (set
// by the first one found), looking through views and fused values.
bool ReachesOneLoop(const HloInstruction& value, const HloInstruction** loop, int depth) {
  if (depth > kMaxLoopSearchDepth || value.parent()->root() == &value) return false;
  const bool view = IsView(value);
  if (!view && HoldingOf(value) != Holding::kFused) {
    if (*loop == nullptr) *loop = &value;
    return *loop == &value;
  }
  if (value.users().empty()) return false;
  for (const HloInstruction* user : value.users()) {
    if (!ReachesOneLoop(*user, loop, depth + 1)) return false;
  }
  return true;
}

// Whether all readers of `instruction` end in one loop. XLA does not copy
// an expensive value into a second loop, but once its readers have been
// fused into one loop that loop is its only reader, and it is fused too
// (InstructionFusion re-examines a fusion's operands after each fusion).
bool ReadersShareOneLoop(const HloInstruction& instruction) {
  const HloInstruction* loop = nullptr;
  for (const HloInstruction* user : instruction.users()) {
    if (!ReachesOneLoop(*user, &loop, 0)) return false;
  }
  return loop != nullptr;
}

bool FusedIntoUsers(const HloInstruction& instruction) {
  if (instruction.parent()->root() == &instruction) return false;
  if (instruction.users().empty()) return true;  // dead: XLA removes it
  const bool expensive = IsExpensive(instruction);
  if (expensive && instruction.user_count() > 1 && !ReadersShareOneLoop(instruction)) return false;
  for (const HloInstruction* user : instruction.users()) {
    if (!FusedThrough(instruction, *user, expensive)) return false;
  }
  return !GloballyUnfusible(instruction);
}

}  // namespace

bool IsOuterProduct(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kDot) || instruction.operand_count() != 2) return false;
  const std::vector<int64_t>& contracting = instruction.dot_dimensions().lhs_contracting;
  const Shape& lhs = instruction.operand(0)->shape();
  for (int64_t d : contracting) {
    if (lhs.dim(static_cast<int>(d)) != 1) return false;
  }
  return true;
}

bool IsFusedMatrixVectorDot(const HloInstruction& instruction) {
  return FusesMatrixOfDot(instruction, 0) || FusesMatrixOfDot(instruction, 1);
}

bool IsLoopFusible(const HloInstruction& instruction) {
  if (instruction.IsElementwise() || IsOuterProduct(instruction)) return true;
  if (IsUnfusedConcatenate(instruction)) return false;
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kReduce:
      return instruction.shape().IsArray();
    default:
      return false;
  }
}

bool FusesProducers(const HloInstruction& instruction) {
  if (instruction.IsElementwise() || IsOuterProduct(instruction)) return true;
  if (IsUnfusedConcatenate(instruction)) return false;
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kReduce:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
    case HloOpcode::kMap:
      return true;
    default:
      return false;
  }
}

bool IsExpensive(const HloInstruction& instruction) {
  // a reduction folded twice is computed twice
  return IsExpensiveElementwise(instruction) || instruction.Is(HloOpcode::kReduce);
}

Holding HoldingOf(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
      return Holding::kParameter;
    case HloOpcode::kConstant:
      return Holding::kConstant;
    default:
      break;
  }
  if (IsView(instruction) || FoldedIntoDots(instruction)) return Holding::kOperand;
  // A top-k numbers its elements itself: the iota of indices goes.
  if (instruction.Is(HloOpcode::kIota) && instruction.user_count() == 1 &&
      XlaRunsAsTopK(*instruction.users()[0])) {
    return Holding::kFused;
  }
  // XLA CPU rewrites a tree reduction (tree_reduction.h) before it fuses:
  // the reduce-window that reads the input is an instruction of its own,
  // run as soon as the input is ready, and frees the input there; only the
  // small reduce of its partial sums is folded into the readers. Folded
  // into a late reader, the model would keep the input alive until that
  // reader runs. The reduction stays a step and a buffer of its own (its
  // result standing for the partial sums the readers wait for).
  if (IsTreeReduction(instruction)) return Holding::kOwn;
  if (IsOutputFusedIntoAdd(instruction)) return Holding::kFused;
  if (IsLoopFusible(instruction) && FusedIntoUsers(instruction)) return Holding::kFused;
  return Holding::kOwn;
}

}  // namespace exla
