// Splitting a softmax along the dimension it normalises.
//
// A softmax, log-softmax, logsumexp or cross-entropy reduces its logits x
// twice along the same dimension d, and the second reduction needs the first
// one's result broadcast back along d:
//
//   m = reduce(x, -inf), max over d
//   s = reduce(exp(x - broadcast(c)), 0), add over d     (c computed from m)
//
// A loop over slices of d cannot accumulate s, since every slice needs the
// final m. The two statistics merge, though: for the maximum M and the sum S
// of exp(x - M) over the slices seen so far, a new slice with maximum m_k
// gives M' = max(M, m_k) and S' = S * exp(M - M') + sum(exp(x_k - M')).
// One loop over slices of d computes both (the "online softmax"), and s is
// S * exp(M - c) afterwards (c is m itself, or m with -inf replaced, so the
// factor is 1 wherever the program's own arithmetic is finite). Every
// consumer of the softmax then reads small per-row values and can itself be
// split along d: the logits are never whole.
//
// Splitting the rows instead needs no such merge but re-reads, for every
// slice of rows, what the logits are computed from: for a language model's
// output layer (h @ W with a vocabulary of 500,000) that is all of W per
// slice. The rule therefore applies where the loop over d slices an input
// larger than the split size, which a loop over rows would read whole.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_REDUCTION_MERGE_H_
#define EXLA_PASSES_TENSOR_SPLITTER_REDUCTION_MERGE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/sharding_analysis.h"
#include "ir/computation.h"
#include "pass/why_not.h"
#include "passes/tensor_splitter/region.h"

namespace exla {

// A sum over the normalised dimension weighted by the softmax's terms
// e = exp(x - broadcast(c)) (the value the sum s reduces): o = dot(e, v) or
// dot(e / broadcast(s), v), e possibly converted first (weighted_sums.h).
// The statistics' loop accumulates it in the same pass, rescaled like s:
// for the accumulator A of Σ exp(x - M) v over the slices so far, a slice
// with the new maximum M' gives A' = A · exp(M - M') + Σ exp(x_k - M') v_k,
// and after the loop o = A · exp(M - c) (divided by s where e was).
struct WeightedSum {
  HloInstruction* dot = nullptr;
  int weights_operand = 0;  // the dot's operand computed from e
  bool normalised = false;  // e divided by s before the dot
  int64_t values_dim = 0;   // the other operand's dimension the dot contracts
};

// A max and a shifted sum of exponentials over the same dimension of the
// same logits, and the region that computes slices of the logits.
struct SoftmaxStatistics {
  HloInstruction* logits = nullptr;  // x
  HloInstruction* max = nullptr;     // m = reduce max of x over dim
  HloInstruction* sum = nullptr;     // s = reduce add of exp(x - broadcast(shift))
  HloInstruction* shift = nullptr;   // c: m's shape, computed from m and constants
  // What lies between the exponential and the sum: value-preserving
  // converts, reshapes and transposes (TensorFlow's f32 -> f32 convert),
  // outermost first.
  std::vector<HloInstruction*> between;
  int64_t dim = 0;
  // That dimension in the maximum's operand: x, or x behind reshapes that
  // add or drop dimensions of extent 1 (JAX's attention).
  int64_t max_dim = 0;
  // The loop that yields `max` from slices of x along `dim` (x and its
  // producers recomputed slice by slice).
  SplitRegion region;
  // Weighted sums the loop accumulates too (one pass over the logits).
  std::vector<WeightedSum> weighted_sums;
};

// The statistics whose sum is `sum`, if `sum` is the sum of a softmax over
// logits larger than `threshold` that can be computed in slices along the
// normalised dimension, and the loop slices an input larger than
// `split_size` along it; otherwise why not.
WhyNot FindSoftmaxStatistics(HloInstruction* sum, int64_t threshold, int64_t split_size,
                             const ShardingAnalysis& sharding, SoftmaxStatistics* statistics);

// The type the loop accumulates `sum` in: the more precise of the
// statistics' sum's and the weighted sum's own (never less precise than the
// program).
PrimitiveType AccumulatorType(const SoftmaxStatistics& statistics, const WeightedSum& sum);

// What one unit of the normalised dimension adds to the slice of the values
// `sum` weighs, as the loop converts them: a trip's slice counts against the
// split size like the logits' slice.
int64_t ValuesBytesPerUnit(const SoftmaxStatistics& statistics, const WeightedSum& sum);

// Replaces `statistics.max`, `statistics.sum` and the weighted sums by the
// results of one loop over chunks of `chunk` elements of the normalised
// dimension (a one-trip loop for the remainder runs first). Returns the loop
// bodies it created.
std::vector<HloComputation*> RewriteSoftmaxStatistics(const SoftmaxStatistics& statistics,
                                                      int64_t chunk);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_REDUCTION_MERGE_H_
