#include "passes/topk_prefilter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/selections.h"
#include "ir/builder.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace exla {
namespace {

// The row must hold at least this many times the k * B candidates.
constexpr int64_t kMinRowPerCandidate = 64;
// XLA CPU splits a reduction over more than 32 elements into a
// reduce-window and a reduce, and fuses neither with the block keys' producer:
// the keys of the whole row are then written out and read back. Blocks of
// at most 32 keep the block maxima one fusion over the row.
constexpr int64_t kMaxBlock = 32;
constexpr int64_t kMinBlock = 8;

// The block size for a row of `n` and a top-`k`, or 0 with `why` set: the
// largest divisor of n up to sqrt(n / k) (which balances the n / B maxima
// against the k * B candidates) and kMaxBlock.
int64_t BlockSize(int64_t n, int64_t k, std::string* why) {
  const double balanced = std::sqrt(static_cast<double>(n) / static_cast<double>(k));
  const int64_t most = std::min<int64_t>(kMaxBlock, static_cast<int64_t>(balanced));
  int64_t best = 0;
  for (int64_t b = kMinBlock; b <= most; ++b) {
    if (n % b == 0) best = b;
  }
  if (best == 0) {
    *why = "no divisor of the row length " + std::to_string(n) + " between " +
           std::to_string(kMinBlock) + " and " + std::to_string(std::max(most, kMinBlock)) +
           " to cut it into blocks";
    return 0;
  }
  if (n < kMinRowPerCandidate * k * best) {
    *why = "the row of " + std::to_string(n) + " is shorter than " +
           std::to_string(kMinRowPerCandidate) + " * k * B = " +
           std::to_string(kMinRowPerCandidate * k * best) + " (k = " + std::to_string(k) +
           ", B = " + std::to_string(best) + "): too few blocks for the prefilter to pay";
    return 0;
  }
  return best;
}

// Why `topk` cannot be prefiltered ("" when it can); `block` gets B.
std::string WhyNot(const HloInstruction& topk, int64_t* block) {
  if (topk.RawAttribute("largest") == std::optional<std::string>("false")) {
    return "it selects the smallest k (only the largest is prefiltered)";
  }
  const Shape& values = topk.operand(0)->shape();
  // XLA CPU runs an f32 top-k in its own kernel, whose order (total order,
  // the lower index first) the exactness argument rests on; it sorts the
  // other types, which this pass has not been checked against.
  if (values.element_type() != PrimitiveType::kF32) return "its values are not f32";
  if (topk.shape().tuple_shape(1).element_type() != PrimitiveType::kS32) {
    return "its indices are not s32";
  }
  const int64_t k = TopKSize(topk);
  if (k <= 0) return "its k is not a plain number";
  std::string why;
  *block = BlockSize(values.dims().back(), k, &why);
  return why;
}

// The integers XLA's total order on floats maps to: the bits as a signed
// integer, the magnitude bits flipped where the sign is set, so that a more
// negative float gives a smaller integer (-NaN < -inf < -0 < +0 < +inf <
// +NaN). The map is its own inverse: it keeps the sign bit.
HloInstruction* TotalOrderKey(HloBuilder& b, HloInstruction* bits) {
  const PrimitiveType type = bits->shape().element_type();
  const int width = PrimitiveTypeBitWidth(type);
  const std::vector<int64_t>& dims = bits->shape().dims();
  auto splat = [&](int64_t value) { return b.Broadcast(b.ConstantIndex(value, type), dims, {}); };
  HloInstruction* sign = b.Binary(HloOpcode::kShiftRightArithmetic, bits, splat(width - 1));
  const int64_t magnitude = static_cast<int64_t>((uint64_t{1} << (width - 1)) - 1);
  HloInstruction* flip = b.Binary(HloOpcode::kAnd, sign, splat(magnitude));
  return b.Binary(HloOpcode::kXor, bits, flip);
}

// The maximum of each block of `block` elements along the last dimension of
// `rows` ([R, n] -> [R, n / block]), in XLA's total order.
HloInstruction* BlockMaxima(HloBuilder& b, HloInstruction* rows, int64_t block) {
  const PrimitiveType type = rows->shape().element_type();
  const PrimitiveType int_type = *SameWidthInt(type);
  const int64_t r = rows->shape().dim(0);
  const int64_t n = rows->shape().dim(1);
  HloComputation* computation = b.computation();
  HloInstruction* bits = computation->Add(HloOpcode::kBitcastConvert,
                                          Shape::Array(int_type, {r, n}), {rows});
  HloInstruction* keys = b.Reshape(TotalOrderKey(b, bits), {r, n / block, block});
  const int width = PrimitiveTypeBitWidth(int_type);
  HloInstruction* lowest =
      b.ConstantIndex(std::numeric_limits<int64_t>::min() >> (64 - width), int_type);
  HloComputation* max = AddScalarReducer(computation->parent(), HloOpcode::kMaximum, int_type,
                                         computation);
  HloInstruction* maxima = TotalOrderKey(b, b.Reduce(keys, lowest, {2}, max));
  return computation->Add(HloOpcode::kBitcastConvert,
                          Shape::Array(type, maxima->shape().dims()), {maxima});
}

// `indices` ([R, c], s32) sorted ascending along the last dimension.
HloInstruction* SortAscending(HloBuilder& b, HloInstruction* indices) {
  HloComputation* computation = b.computation();
  HloModule* module = computation->parent();
  auto owned = std::make_unique<HloComputation>(module->UniqueName("topk_prefilter_ascending"));
  HloComputation* less = module->AddComputationBefore(std::move(owned), computation);
  HloBuilder lb(less);
  const Shape scalar = Shape::Array(PrimitiveType::kS32, {});
  less->set_root(lb.Compare(lb.Parameter(0, scalar, "lhs"), lb.Parameter(1, scalar, "rhs"),
                            ComparisonDirection::kLt));
  HloInstruction* sorted =
      computation->Add(HloOpcode::kSort, indices->shape(), {indices}, "blocks");
  sorted->SetIntListAttribute("dimensions", {1});
  sorted->SetCalledComputation("to_apply", less);
  return sorted;
}

// Rows of `table` ([R * per_row, W]) picked per row: row i of the result
// ([R, c, W]) holds table rows i * per_row + picks[i, j] (picks: [R, c], s32,
// each in [0, per_row)).
HloInstruction* GatherRows(HloBuilder& b, HloInstruction* table, HloInstruction* picks,
                           int64_t per_row) {
  const int64_t r = picks->shape().dim(0);
  const int64_t c = picks->shape().dim(1);
  const int64_t width = table->shape().dim(1);
  HloInstruction* row = b.Iota(Shape::Array(PrimitiveType::kS32, {r, c}), 0);
  HloInstruction* stride = b.Broadcast(b.ConstantIndex(per_row), {r, c}, {});
  HloInstruction* flat =
      b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, row, stride), picks);
  HloInstruction* gather = b.computation()->Add(
      HloOpcode::kGather, Shape::Array(table->shape().element_type(), {r, c, width}),
      {table, flat}, "candidates");
  gather->SetAttribute("offset_dims", "{2}");
  gather->SetAttribute("collapsed_slice_dims", "{0}");
  gather->SetAttribute("start_index_map", "{0}");
  gather->SetAttribute("index_vector_dim", "2");
  gather->SetAttribute("slice_sizes", "{1," + std::to_string(width) + "}");
  return gather;
}

HloInstruction* TopK(HloBuilder& b, HloInstruction* rows, int64_t k) {
  std::vector<int64_t> dims = rows->shape().dims();
  dims.back() = k;
  HloInstruction* topk = b.computation()->Add(
      HloOpcode::kTopK,
      Shape::Tuple({Shape::Array(rows->shape().element_type(), dims),
                    Shape::Array(PrimitiveType::kS32, dims)}),
      {rows}, "prefiltered");
  topk->SetAttribute("k", std::to_string(k));
  topk->SetAttribute("largest", "true");
  return topk;
}

// The prefiltered top-k, a tuple shaped as `topk`'s.
HloInstruction* Prefilter(HloInstruction* topk, int64_t block) {
  HloBuilder b(topk->parent());
  HloInstruction* x = topk->operand(0);
  const int64_t k = TopKSize(*topk);
  const int64_t n = x->shape().dims().back();
  const int64_t r = x->shape().ElementCount() / n;
  const int64_t blocks = n / block;
  HloInstruction* rows = b.Reshape(x, {r, n});
  HloInstruction* best_blocks = b.GetTupleElement(TopK(b, BlockMaxima(b, rows, block), k), 1);
  HloInstruction* chosen = SortAscending(b, best_blocks);
  HloInstruction* candidates =
      GatherRows(b, b.Reshape(x, {r * blocks, block}), chosen, blocks);
  HloInstruction* best = TopK(b, b.Reshape(candidates, {r, k * block}), k);
  // A candidate's position p is element p % B of the chosen block p / B.
  HloInstruction* position = b.GetTupleElement(best, 1);
  HloInstruction* width = b.Broadcast(b.ConstantIndex(block), {r, k}, {});
  HloInstruction* slot = b.Binary(HloOpcode::kDivide, position, width);
  HloInstruction* within = b.Binary(HloOpcode::kRemainder, position, width);
  HloInstruction* block_of =
      b.Reshape(GatherRows(b, b.Reshape(chosen, {r * k, 1}), slot, k), {r, k});
  HloInstruction* index =
      b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, block_of, width), within);
  // Back to the top-k's own leading dimensions where it had other than [r].
  const std::vector<int64_t>& out = topk->shape().tuple_shape(0).dims();
  auto as_out = [&](HloInstruction* h) { return h->shape().dims() == out ? h : b.Reshape(h, out); };
  return b.Tuple({as_out(b.GetTupleElement(best, 0)), as_out(index)});
}

}  // namespace

bool TopKPrefilter::Run(HloModule* module) {
  bool changed = false;
  // A snapshot: the rewrite adds computations (its reducer and comparator).
  std::vector<HloComputation*> computations;
  for (const auto& computation : module->computations()) computations.push_back(computation.get());
  for (HloComputation* computation : computations) {
    std::vector<HloInstruction*> topks;
    for (const auto& h : computation->instructions()) {
      if (IsTopK(*h)) topks.push_back(h.get());
    }
    for (HloInstruction* topk : topks) {
      int64_t block = 0;
      const std::string why = WhyNot(*topk, &block);
      if (!why.empty()) {
        Log("top-k at " + topk->name() + " not prefiltered: " + why);
        continue;
      }
      topk->ReplaceAllUsesWith(Prefilter(topk, block));
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
