#include "model/expand/triangular_solve.h"

#include <algorithm>

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

}  // namespace

int64_t SolveBlocksBytes(const HloInstruction& solve) {
  const DiagonalBlocks blocks = BlocksOf(solve);
  return blocks.batch * blocks.count * blocks.rows * blocks.rows * blocks.element_bytes;
}

int64_t SolveScratchBytes(const HloInstruction& solve) {
  const DiagonalBlocks blocks = BlocksOf(solve);
  if (blocks.count == 0) return 0;
  const int64_t diagonal = blocks.batch * blocks.count * blocks.rows * blocks.element_bytes;
  const int64_t working = (blocks.count > 1 ? 2 : 1) * SolveBlocksBytes(solve) + diagonal;
  return SolveBlocksBytes(solve) + std::max(working, solve.shape().ByteSize());
}

}  // namespace exla
