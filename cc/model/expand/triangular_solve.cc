#include "model/expand/triangular_solve.h"

#include <algorithm>

#include "model/expand/tree_reduction.h"

namespace exla {
namespace {

// The block size of XLA's triangular solve expander (its default).
constexpr int64_t kBlockRows = 128;

// The diagonal blocks of a solve's matrix: how many matrices (batch), how
// many blocks each, the rows of a block, the bytes of an element.
struct DiagonalBlocks {
  int64_t batch = 0;
  int64_t count = 0;
  int64_t rows = 0;
  int64_t element_bytes = 0;
};

DiagonalBlocks BlocksOf(const HloInstruction& solve) {
  if (!solve.Is(HloOpcode::kTriangularSolve) || solve.operand_count() != 2) return {};
  const Shape& a = solve.operand(0)->shape();
  if (!a.IsArray() || a.rank() < 2 || a.ElementCount() == 0) return {};
  const int64_t m = a.dim(a.rank() - 1);
  const int64_t rows = std::min(m, kBlockRows);
  return {a.ElementCount() / (m * m), (m + rows - 1) / rows, rows, a.ByteSize() / a.ElementCount()};
}

// Whether the expansion of a one-block solve scales the blocks in the
// matrix's own buffer. With rows short enough to sum in one pass, the
// expander's masked diagonal fuses into its reduce and the masked, scaled
// blocks into one fusion of the matrix; buffer assignment then gives that
// fusion the matrix's buffer when the solve is its only reader (a
// parameter's buffer is never reused). Longer rows need a masked copy for
// the reduce-window beside the scaled blocks.
bool ScalesInPlace(const HloInstruction& solve, const DiagonalBlocks& blocks) {
  const HloInstruction& matrix = *solve.operand(0);
  return blocks.count == 1 && blocks.rows <= kTreeReductionWindow && matrix.user_count() == 1 &&
         !matrix.Is(HloOpcode::kParameter);
}

}  // namespace

int64_t SolveBlocksBytes(const HloInstruction& solve) {
  const DiagonalBlocks blocks = BlocksOf(solve);
  return blocks.batch * blocks.count * blocks.rows * blocks.rows * blocks.element_bytes;
}

int64_t SolveScratchBytes(const HloInstruction& solve) {
  const DiagonalBlocks blocks = BlocksOf(solve);
  if (blocks.count == 0) return 0;
  const int64_t diagonal = blocks.batch * blocks.count * blocks.rows * blocks.element_bytes;
  const int64_t arrays = blocks.count > 1 ? 2 : ScalesInPlace(solve, blocks) ? 0 : 1;
  // In place, the loop's row of the inverse and its product are alive
  // beside the accumulator instead (each the size of the diagonal).
  const int64_t rows = arrays == 0 ? 2 * diagonal : 0;
  const int64_t array = SolveBlocksBytes(solve);
  const int64_t working = arrays * array + diagonal + rows;
  return array + std::max(working, solve.shape().ByteSize());
}

}  // namespace exla
