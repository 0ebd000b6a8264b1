#include "model/fusion/dot_operand_copies.h"

#include <algorithm>
#include <vector>

#include "ir/computation.h"
#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// The dimensions of a dot operand's read, by role: batch, free (neither
// batch nor contracting) and contracting.
struct OperandRoles {
  std::vector<int64_t> batch, free, contracting;
};

OperandRoles RolesOf(const HloInstruction& dot, int operand) {
  const DotDimensions dims = dot.dot_dimensions();
  OperandRoles roles{operand == 0 ? dims.lhs_batch : dims.rhs_batch, {},
                     operand == 0 ? dims.lhs_contracting : dims.rhs_contracting};
  for (int64_t d = 0; d < dot.operand(operand)->shape().rank(); ++d) {
    if (std::find(roles.batch.begin(), roles.batch.end(), d) == roles.batch.end() &&
        std::find(roles.contracting.begin(), roles.contracting.end(), d) == roles.contracting.end()) {
      roles.free.push_back(d);
    }
  }
  return roles;
}

// Dimension d of what the dot reads as its operand `operand` is dimension
// [d] of the buffer it reads (a transpose folded into the read permutes).
std::vector<int64_t> ReadPermutation(const HloInstruction& dot, int operand, const HloInstruction& buffer) {
  const HloInstruction* read = dot.operand(operand);
  if (&buffer != read) return read->dimensions();
  std::vector<int64_t> identity(read->shape().rank());
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
  return identity;
}

}  // namespace

const HloInstruction* DotOperandBuffer(const HloInstruction& dot, int operand) {
  const HloInstruction* read = dot.operand(operand);
  if (read->Is(HloOpcode::kTranspose) && HoldingOf(*read) == Holding::kOperand) return read->operand(0);
  return read;
}

std::vector<int64_t> DotOperandOrder(const HloInstruction& dot, int operand) {
  const HloInstruction* buffer = DotOperandBuffer(dot, operand);
  const std::vector<int64_t> permutation = ReadPermutation(dot, operand, *buffer);
  const OperandRoles roles = RolesOf(dot, operand);
  std::vector<int64_t> logical = roles.batch;
  const std::vector<int64_t>& second = operand == 0 ? roles.free : roles.contracting;
  const std::vector<int64_t>& third = operand == 0 ? roles.contracting : roles.free;
  logical.insert(logical.end(), second.begin(), second.end());
  logical.insert(logical.end(), third.begin(), third.end());
  std::vector<int64_t> order;
  for (int64_t d : logical) {
    if (d < 0 || d >= static_cast<int64_t>(permutation.size())) continue;
    const int64_t b = permutation[d];
    if (b >= 0 && b < buffer->shape().rank() && buffer->shape().dim(static_cast<int>(b)) != 1) order.push_back(b);
  }
  return order;
}

bool DotTransposesOperand(const HloInstruction& dot, int operand) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2 || operand < 0 || operand > 1) return false;
  // A dot XLA emits as a loop (a matrix-vector product that fuses its
  // matrix, an outer product) reads its operands in any order.
  if (IsFusedMatrixVectorDot(dot) || IsLoopFusible(dot)) return false;
  const HloInstruction* read = dot.operand(operand);
  const HloInstruction* buffer = DotOperandBuffer(dot, operand);
  if (!read->shape().IsArray() || !buffer->shape().IsArray()) return false;
  const std::vector<int64_t> permutation = ReadPermutation(dot, operand, *buffer);
  if (static_cast<int64_t>(permutation.size()) != read->shape().rank()) return false;
  const OperandRoles roles = RolesOf(dot, operand);
  const std::vector<int64_t>& batch = roles.batch;
  const std::vector<int64_t>& free = roles.free;
  const std::vector<int64_t>& contracting = roles.contracting;
  // A dot of one free and one contracting dimension (besides the batch
  // ones) is canonical in either order: the GEMM reads a transposed
  // operand. With more, XLA merges each block into one dimension, in its
  // canonical order only: free then contracting for the left operand,
  // contracting then free for the right one.
  const bool either = free.size() <= 1 && contracting.size() <= 1;
  std::vector<std::vector<std::vector<int64_t>>> tails;
  if (either || operand == 0) tails.push_back({free, contracting});
  if (either || operand == 1) tails.push_back({contracting, free});
  for (const auto& tail : tails) {
    std::vector<int64_t> order;
    for (int64_t d : batch) order.push_back(permutation[d]);
    for (const std::vector<int64_t>& block : tail) {
      for (int64_t d : block) order.push_back(permutation[d]);
    }
    if (InRowMajorOrder(order, buffer->shape())) return false;
  }
  return true;
}

std::vector<std::pair<const HloInstruction*, int>> TransposedDotReads(const HloInstruction& producer) {
  std::vector<std::pair<const HloInstruction*, int>> reads;
  std::vector<const HloInstruction*> readers;
  for (const HloInstruction* user : producer.users()) {
    const bool folded = user->Is(HloOpcode::kTranspose) && HoldingOf(*user) == Holding::kOperand;
    if (!folded) readers.push_back(user);
    for (const HloInstruction* dot : folded ? user->users() : std::vector<HloInstruction*>{}) readers.push_back(dot);
  }
  for (const HloInstruction* reader : readers) {
    if (!reader->Is(HloOpcode::kDot) || IsFusedMatrixVectorDot(*reader)) continue;
    for (int i = 0; i < reader->operand_count() && i < 2; ++i) {
      if (DotOperandBuffer(*reader, i) == &producer && DotTransposesOperand(*reader, i)) reads.push_back({reader, i});
    }
  }
  return reads;
}

bool WrittenTransposed(const HloInstruction& producer) {
  if (!IsLoopFusible(producer) || producer.users().empty() || HoldingOf(producer) != Holding::kOwn) return false;
  if (producer.parent()->root() == &producer) return false;
  size_t reads = 0;  // every read of the producer must be a transposed one
  for (const HloInstruction* user : producer.users()) {
    const bool folded = user->Is(HloOpcode::kTranspose) && HoldingOf(*user) == Holding::kOperand;
    if (!folded && !user->Is(HloOpcode::kDot)) return false;
    std::vector<const HloInstruction*> dots = {user};
    if (folded) dots.assign(user->users().begin(), user->users().end());
    for (const HloInstruction* dot : dots) {
      if (!dot->Is(HloOpcode::kDot)) return false;
      for (int i = 0; i < dot->operand_count(); ++i) reads += DotOperandBuffer(*dot, i) == &producer;
    }
  }
  return reads > 0 && TransposedDotReads(producer).size() == reads;
}

}  // namespace exla
