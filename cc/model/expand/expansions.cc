#include "model/expand/expansions.h"

#include <algorithm>
#include <array>
#include <string>

#include "model/expand/cholesky.h"
#include "model/expand/convolution_layout.h"
#include "model/expand/triangular_solve.h"
#include "model/expand/tree_reduction.h"

namespace exla {
namespace {

// The target of the custom call `instruction`, quoted as printed, or "".
std::string CustomCallTarget(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kCustomCall)) return "";
  return instruction.RawAttribute("custom_call_target").value_or("");
}

// The rows, columns and element bytes of the matrix (operand 0) a QR
// custom call reads; zeros when it reads none.
std::array<int64_t, 3> QrOperand(const HloInstruction& instruction) {
  if (instruction.operand_count() < 1 || !instruction.operand(0)->shape().IsArray() ||
      instruction.operand(0)->shape().rank() < 2) {
    return {0, 0, 0};
  }
  const Shape& a = instruction.operand(0)->shape();
  const int64_t element = a.ByteSize() / std::max<int64_t>(1, a.ElementCount());
  return {a.dim(a.rank() - 2), a.dim(a.rank() - 1), element};
}

// Scratch of the instructions XLA expands into several (see ScratchBytes).
int64_t ExpansionScratchBytes(const HloInstruction& instruction) {
  // XLA CPU expands Cholesky factorisations into loops over columns, in
  // blocks of 128 columns (cholesky.h).
  if (instruction.Is(HloOpcode::kCholesky)) return CholeskyScratchBytes(instruction);
  // A triangular solve's arrays of blocks (its accumulator of inverses is
  // computed first where the expansion is inlined, and taken out of the
  // scratch of the solve that last reads it: buffers/scratch.cc).
  if (instruction.Is(HloOpcode::kTriangularSolve)) return SolveScratchBytes(instruction);
  // A convolution over batch groups (the filter gradient of a depthwise
  // convolution) becomes one dense convolution whose result is groups times
  // larger, then a select of the diagonal blocks before the reduction.
  if (instruction.Is(HloOpcode::kConvolution) && ConvolutionGroupCount(instruction, "batch_group_count") > 1) {
    return 2 * ConvolutionGroupCount(instruction, "batch_group_count") * instruction.shape().ByteSize();
  }
  // XLA CPU's top-k kernel takes f32 only; XLA decomposes any other top-k
  // into a sort of the whole operand with an s32 iota of indices, then
  // slices of the k leading elements: the sorted values and indices.
  if (instruction.Is(HloOpcode::kTopK) && instruction.operand_count() == 1 &&
      instruction.operand(0)->shape().IsArray() &&
      instruction.operand(0)->shape().element_type() != PrimitiveType::kF32) {
    const Shape& operand = instruction.operand(0)->shape();
    return operand.ByteSize() + 4 * operand.ElementCount();
  }
  if (IsTreeReduction(instruction)) {  // the reduce-window's partial sums
    const int64_t partials = TreeReductionPartials(instruction);
    return partials * instruction.shape().ByteSize();
  }
  if (!instruction.Is(HloOpcode::kSelectAndScatter) || instruction.operand_count() < 2) return 0;
  // One s32 iota per dimension of the operand; the reduce-window's value and
  // index per source element; the indices concatenated for the scatter.
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& source = instruction.operand(1)->shape();
  const int64_t rank = operand.rank();
  const int64_t index_bytes = 4 * rank;
  return operand.ElementCount() * index_bytes +
         source.ElementCount() * (source.ByteSize() / std::max<int64_t>(1, source.ElementCount()) + index_bytes) +
         source.ElementCount() * index_bytes;
}

}  // namespace

int64_t ScratchBytes(const HloInstruction& instruction) {
  return LayoutCopyOfResultBytes(instruction) + ExpansionScratchBytes(instruction);
}

int64_t ExpansionLoopStateElements(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kCholesky)) return 5;
  if (instruction.Is(HloOpcode::kTriangularSolve)) return 3;
  if (!instruction.Is(HloOpcode::kCustomCall)) return 0;
  const std::string target = instruction.RawAttribute("custom_call_target").value_or("");
  return target == "\"Qr\"" || target == "\"ProductOfElementaryHouseholderReflectors\"" ? 3 : 0;
}

int64_t ExpansionEarlyBytes(const HloInstruction& instruction) {
  // The masks and zero blocks of a Cholesky factorisation (cholesky.h).
  if (instruction.Is(HloOpcode::kCholesky)) return CholeskyEarlyBytes(instruction);
  // The accumulator of the inverses of a triangular matrix's diagonal
  // blocks (triangular_solve.h).
  return SolveBlocksBytes(instruction);
}

int64_t ExpansionEarlyBytesInScratch(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kCholesky)) return CholeskyEarlyBytesInScratch(instruction);
  return SolveBlocksBytes(instruction);
}

std::vector<int64_t> ExpansionSmallValues(const HloInstruction& instruction) {
  // A Cholesky factorisation's loop also holds a pred[1,1] that flags a
  // non-positive pivot (its lower-triangle mask: ExpansionEarlyBytes).
  if (instruction.Is(HloOpcode::kCholesky)) return {4, 1, 1};
  // Each step of a QR loop copies its counter before adding to it; Qr
  // writes the norm of the column, its square root, the reflector's
  // diagonal and tau (scalars), the column and the reflector (m), its
  // product with the matrix and the updated taus (n); the product of
  // reflectors a column of Y (m) and its product with T (n). (Qr's
  // updated m x n matrix and its copy into the loop's state are not
  // counted: XLA placed them in the allocations of the entry's results,
  // which it lends to temporaries that end before the result is written,
  // and which the model does not lend.)
  const std::string target = CustomCallTarget(instruction);
  const auto [m, n, e] = QrOperand(instruction);
  if (target == "\"Qr\"") return {4, 4, 1, e, e, e, e, m * e, m * e, n * e, n * e};
  if (target == "\"ProductOfElementaryHouseholderReflectors\"") return {4, 4, 1, m * e, n * e};
  if (ExpansionLoopStateElements(instruction) > 0) return {4, 1};
  if (instruction.Is(HloOpcode::kRngBitGenerator) &&
      instruction.RawAttribute("algorithm").value_or("") == "rng_philox") {
    return {4, 4};
  }
  return {};
}

}  // namespace exla
