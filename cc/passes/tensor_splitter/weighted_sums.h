// Sums weighted by a softmax's terms, for the loop that computes the
// softmax's statistics to accumulate in the same pass (reduction_merge.h:
// WeightedSum, and how the loop merges it).
//
// Attention's output o = softmax(s)·v is such a sum over the keys. The
// statistics' loop computes every exp(s - M) slice by slice already; a loop
// after it for o computes the scores again, half of attention's arithmetic
// (FlashAttention's forward is one pass for this reason). The accumulator
// keeps the dot's result (rows × head size) beside the statistics, which
// the plan search weighs (split_choices.h: kTwoPass).
//
// Conditions, all checked:
//  * the dot contracts exactly the normalised dimension of its weights;
//  * the weights are e (the value the statistics' sum reduces) or e divided
//    by that sum broadcast along the normalised dimension (a softmax), each
//    possibly behind one convert;
//  * the dot's other operand is computed neither from the logits nor from
//    the statistics (the loop reads it, slice by slice, from before);
//  * the plan did not choose two passes for the dot (kTwoPass).
//
// Rounding. The program rounds each e_ij / s_i (and, converted, to the
// weights' type) and sums its products with v in the dot. The loop sums
// exp(x_ij - M) v_jd in the accumulator's type (the more precise of the
// sum's and the dot's), rescales by exp(M - M'), divides by s once at the
// end and rounds once to the dot's type. The rescale factors telescope as in
// the statistics' merge (reduction_merge.cc): a few ulps per term, not an
// error that grows with the logits. The sum over j carries the same bound
// as the program's dot, a multiple of the unit roundoff times
// Σ_j |e_ij v_jd| / s_i, in a type never less precise than the program's.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_WEIGHTED_SUMS_H_
#define EXLA_PASSES_TENSOR_SPLITTER_WEIGHTED_SUMS_H_

#include <string>
#include <vector>

#include "passes/tensor_splitter/reduction_merge.h"
#include "passes/tensor_splitter/split_choices.h"

namespace exla {

// The weighted sums of `statistics`' softmax that its loop can accumulate,
// unless `chosen` leaves them to a second loop (kTwoPass). A dot over the
// normalised dimension of the softmax's terms that the loop cannot
// accumulate gets a note in `notes` saying why.
std::vector<WeightedSum> FindWeightedSums(const SoftmaxStatistics& statistics,
                                          const DimensionChoices& chosen,
                                          std::vector<std::string>* notes);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_WEIGHTED_SUMS_H_
