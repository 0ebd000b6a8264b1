// The row sum of a matrix product times weights, read from the product of
// the weights that the program already has.
//
// The rule, for a reduce over the last dimension j of an elementwise product
// whose factors are a matrix product D = A·Bᵀ (contracting d), weights W and
// values constant along j (per-row factors ρ):
//
//   Σ_j (Σ_d A_id B_jd) · W_ij · ρ_i  =  ρ_i / σ_i · Σ_d A_id · O_id
//
// where O = P·B, with P = W · σ (σ: per-row factors again), is a product the
// program computes anyway. Both sides are the one finite sum
// Σ_j Σ_d A_id B_jd W_ij ρ_i in another order. In attention's backward pass
// the left side is rowsum(dP ∘ P) with dP = dO·Vᵀ, a pass over every score,
// and O is the forward's output: the right side, rowsum(dO ∘ O) up to per-row
// factors, reads no score at all (FlashAttention's D = rowsum(dO ∘ O)).
//
// Conditions, all checked (pattern by pattern in product_row_sums.cc):
//  * the reduce adds over the last dimension j of its operand only;
//  * its operand is a product (multiplies, divides by per-row broadcasts,
//    same-type converts) of exactly one D, one weight W, and broadcasts that
//    are constant along j;
//  * D = dot(A, B) with B on the right and exactly one free dimension of B,
//    which is D's last and reaches the product's last dimension through
//    reshapes that only add or drop dimensions of extent 1, and converts
//    that lose nothing;
//  * the computation has O = dot(P', B) (either operand order) for the same
//    B, contracting exactly P's last dimension with B's dimension j, where P'
//    is P or a convert of it, and P decomposes (as above) into the same W
//    and per-row factors;
//  * O holds the rows and B's dimensions that D contracts, nothing else,
//    and B's batch dimensions pair with the same rows in D as in O (the
//    rows the sums run over are the same rows);
//  * O and P' are stored at least as precisely as D, and O does not depend
//    on the reduce (O comes first).
//
// Rounding. Both sides round the same products: the program rounds D (to
// D's type) and sums over j; the rewrite rounds P' and O (to types at least
// as precise as D's, by the condition above) and sums over d. Each side's
// error is bounded by (n + k + c)·u·Σ_j Σ_d |A_id B_jd W_ij ρ_i|, with n and
// k the extents of j and d, u the unit roundoff of the types involved and c
// the few per-row products and quotients; the rewrite adds at most one
// rounding of P' where the program converts its weights to a narrower type
// before O (bf16 attention), the program's own rounding of its forward
// output. Neither side is more exposed to cancellation than the other: the
// bound is on the same sum of absolute products.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_PRODUCT_ROW_SUMS_H_
#define EXLA_PASSES_TENSOR_SPLITTER_PRODUCT_ROW_SUMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"

namespace exla {

// Rewrites every such row sum in `computation` whose product operand is
// larger than `threshold` bytes. A row sum of a product with a matrix product
// that the rule leaves gets a note in `notes` saying why. Returns whether it
// changed anything.
bool RewriteProductRowSums(HloComputation* computation, int64_t threshold,
                           std::vector<std::string>* notes);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_PRODUCT_ROW_SUMS_H_
