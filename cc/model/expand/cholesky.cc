#include "model/expand/cholesky.h"

#include <algorithm>

namespace exla {
namespace {

// The block size XLA's CholeskyExpander passes to BuildCholesky.
constexpr int64_t kBlock = 128;

// XLA's parallel task assigner outlines a memory-bound loop that reads and
// writes this many bytes (two threads of 256 KiB: fusion/parallel_tasks.h,
// which this stage cannot include).
constexpr int64_t kOutlinedLoopBytes = 2 * (256 << 10);

// A factorisation: how many matrices (batch), their rows, the bytes of an
// element, and whether its factor l is a temporary beside the result.
struct Factorisation {
  int64_t batch = 0;
  int64_t n = 0;
  int64_t element_bytes = 0;
  bool factor_beside_result = false;
};

// Whether XLA reads the matrix of `cholesky` straight out of a parameter
// (through views of it), and so transposes only the slices it reads: the
// transposed matrix of an upper factor is then no value of its own.
bool ReadsParameter(const HloInstruction& cholesky) {
  const HloInstruction* operand = cholesky.operand(0);
  while ((operand->Is(HloOpcode::kBitcast) || operand->Is(HloOpcode::kReshape)) && operand->operand_count() == 1) {
    operand = operand->operand(0);
  }
  return operand->Is(HloOpcode::kParameter);
}

Factorisation FactorisationOf(const HloInstruction& cholesky) {
  if (!cholesky.Is(HloOpcode::kCholesky) || cholesky.operand_count() != 1) return {};
  const Shape& a = cholesky.shape();
  if (!a.IsArray() || a.rank() < 2 || a.ElementCount() == 0) return {};
  const int64_t n = a.dim(a.rank() - 1);
  const bool upper = cholesky.RawAttribute("lower").value_or("false") != "true";
  return {a.ElementCount() / (n * n), n, a.ByteSize() / a.ElementCount(), upper && ReadsParameter(cholesky)};
}

bool Blocked(const Factorisation& f) { return f.n > kBlock; }

int64_t BlockColumns(const Factorisation& f) { return (f.n + kBlock - 1) / kBlock; }

// The columns of block column `j`.
int64_t Columns(const Factorisation& f, int64_t j) { return std::min(kBlock, f.n - j * kBlock); }

// Bytes of a rows x columns slice of every matrix of the batch.
int64_t Slice(const Factorisation& f, int64_t rows, int64_t columns) {
  return f.batch * rows * columns * f.element_bytes;
}

// The zero factor the loop of block column `j` starts from (a column of one
// is a square root, with no loop).
int64_t ZeroFactor(const Factorisation& f, int64_t j) {
  const int64_t k = Columns(f, j);
  return k > 1 ? Slice(f, k, k) : 0;
}

// The accumulator of inverses of the solve of block column `j` (every
// column but the last solves the rows below its block).
int64_t Accumulator(const Factorisation& f, int64_t j) {
  return j + 1 < BlockColumns(f) ? Slice(f, kBlock, kBlock) : 0;
}

// The pred masks of the loops: one of 128 x 128, one for a shorter last
// block of more than one column.
int64_t Masks(const Factorisation& f) {
  const int64_t last = Columns(f, BlockColumns(f) - 1);
  return f.batch * kBlock * kBlock + (last > 1 && last < kBlock ? f.batch * last * last : 0);
}

// The early values still alive when block column `j` starts.
int64_t EarlyFrom(const Factorisation& f, int64_t j) {
  int64_t bytes = Masks(f);
  for (int64_t c = j; c < BlockColumns(f); ++c) bytes += ZeroFactor(f, c) + Accumulator(f, c);
  return bytes;
}

// The loop's A - L L^T beside L L^T: an elementwise loop that XLA outlines
// for threads when large, which then writes a buffer of its own.
int64_t Difference(const Factorisation& f, int64_t k) {
  return 3 * Slice(f, k, k) >= kOutlinedLoopBytes ? Slice(f, k, k) : 0;
}

// Bytes alive during block column `j` (0-based), early values included.
int64_t BlockColumnBytes(const Factorisation& f, int64_t j) {
  const int64_t i = j * kBlock;
  const int64_t k = Columns(f, j);
  const int64_t below = Slice(f, f.n - i - k, k);  // the panel's rows under the block
  const int64_t product = Slice(f, k, k) + Difference(f, k);
  // The first loop: its block in the result's buffer, l not yet built.
  if (j == 0) return EarlyFrom(f, 0) + below + product;
  const int64_t factor = f.factor_beside_result ? Slice(f, f.n, f.n) : 0;
  const int64_t update = Slice(f, f.n - i, i) + Slice(f, k, i) + Slice(f, f.n - i, k);
  const int64_t loop = k > 1 ? Slice(f, k, k) + product + below : 0;
  return factor + EarlyFrom(f, j) + std::max(update, loop);
}

// Bytes alive while the solve of block column `j` inverts its block: the
// rows below the block and the scaled block beside the accumulator. (It
// then multiplies the rows by the inverse: the rows, the inverse and their
// product, the accumulator gone, hold what the update of block column
// j + 1 holds, counted there.)
int64_t SolveBytes(const Factorisation& f, int64_t j) {
  if (j + 1 >= BlockColumns(f)) return 0;
  const int64_t factor = f.factor_beside_result ? Slice(f, f.n, f.n) : 0;
  const int64_t below = Slice(f, f.n - (j + 1) * kBlock, kBlock);
  return factor + EarlyFrom(f, j) - ZeroFactor(f, j) + below + Slice(f, kBlock, kBlock);
}

// Bytes the unblocked loop (n <= 128) holds beside its operand and result:
// L L^T, a dot's result, on every trip, and the factor l, the loop's state
// (cholesky_expander.cc, CholeskyUnblocked). A lower factor is then
// selected elementwise (NaN where a pivot failed) into the result, which
// XLA's buffer assignment lets l share: the loop writes l into the result's
// buffer. An upper factor is the transpose of l, which cannot share.
int64_t UnblockedScratchBytes(const HloInstruction& cholesky) {
  const bool lower = cholesky.RawAttribute("lower").value_or("false") == "true";
  return (lower ? 1 : 2) * cholesky.shape().ByteSize();
}

}  // namespace

int64_t CholeskyEarlyBytes(const HloInstruction& cholesky) {
  const Factorisation f = FactorisationOf(cholesky);
  if (f.n == 0) return 0;
  // Unblocked, the model counts one mask of the matrix (batch aside).
  return Blocked(f) ? EarlyFrom(f, 0) : f.n * f.n;
}

int64_t CholeskyScratchBytes(const HloInstruction& cholesky) {
  const Factorisation f = FactorisationOf(cholesky);
  if (f.n == 0) return 0;
  if (!Blocked(f)) return UnblockedScratchBytes(cholesky);
  int64_t bytes = 0;
  for (int64_t j = 0; j < BlockColumns(f); ++j) {
    bytes = std::max({bytes, BlockColumnBytes(f, j), SolveBytes(f, j)});
  }
  return bytes;
}

int64_t CholeskyEarlyBytesInScratch(const HloInstruction& cholesky) {
  const Factorisation f = FactorisationOf(cholesky);
  return f.n > 0 && Blocked(f) ? EarlyFrom(f, 0) : 0;
}

}  // namespace exla
