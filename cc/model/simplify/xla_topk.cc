#include "model/simplify/xla_topk.h"

#include <cstdint>
#include <vector>

#include "analysis/front_slice.h"
#include "ir/computation.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

// compare(p0, p1), direction=GT: the larger key first. XLA also accepts
// comparisons of the keys' bits (its NaN-safe forms); exla's programs only
// reach it with this one, and missing a form only costs a sort too many.
bool IsGreaterThan(const HloComputation* comparator) {
  if (comparator == nullptr || comparator->root() == nullptr) return false;
  HloInstruction* root = comparator->root();
  HloInstruction* lhs = nullptr;
  HloInstruction* rhs = nullptr;
  return Match(root, m::OpWithOpcode(HloOpcode::kCompare, m::Parameter().Bind(&lhs),
                                     m::Parameter().Bind(&rhs))) &&
         lhs == comparator->parameter(0) && rhs == comparator->parameter(1) &&
         root->comparison_direction() == ComparisonDirection::kGt;
}

// An s32 iota along `dim` of `keys`' shape, or a broadcast of a vector iota
// into it: the indices XLA's top-k returns itself.
bool IsIndexIota(const HloInstruction& indices, const Shape& keys, int64_t dim) {
  if (indices.shape().element_type() != PrimitiveType::kS32) return false;
  if (indices.Is(HloOpcode::kIota)) {
    return indices.shape().dims() == keys.dims() && indices.IntAttribute("iota_dimension") == dim;
  }
  if (!indices.Is(HloOpcode::kBroadcast) || indices.operand_count() != 1) return false;
  const HloInstruction& vector = *indices.operand(0);
  return vector.Is(HloOpcode::kIota) && vector.shape().rank() == 1 &&
         vector.shape().dim(0) == keys.dim(static_cast<int>(dim)) &&
         indices.dimensions() == std::vector<int64_t>{dim};
}

// Whether every use of `sort` reads the same first k entries through a slice
// (through its get-tuple-elements when it sorts two arrays).
bool ReadOnlyAtItsFront(const HloInstruction& sort, int64_t dim) {
  int64_t k = 0;
  for (const HloInstruction* user : sort.users()) {
    const HloInstruction* slice = user;
    if (sort.operand_count() == 2) {
      if (!user->Is(HloOpcode::kGetTupleElement) || user->users().size() != 1) return false;
      slice = user->users()[0];
    }
    const int64_t entries = FrontOfDimension(*slice, dim);
    if (entries <= 0 || (k != 0 && entries != k)) return false;
    k = entries;
  }
  return k > 0;
}

}  // namespace

bool XlaRunsAsTopK(const HloInstruction& sort) {
  if (!sort.Is(HloOpcode::kSort) || sort.users().empty()) return false;
  if (sort.operand_count() != 1 && sort.operand_count() != 2) return false;
  const Shape& keys = sort.operand(0)->shape();
  const std::vector<int64_t> sorted = sort.dimensions();
  if (!keys.IsArray() || keys.element_type() != PrimitiveType::kF32 || keys.rank() < 1 ||
      keys.rank() > 2 || sorted.size() != 1) {
    return false;
  }
  const int64_t dim = sorted[0];
  if (sort.operand_count() == 2 && !IsIndexIota(*sort.operand(1), keys, dim)) return false;
  return IsGreaterThan(sort.CalledComputation("to_apply")) && ReadOnlyAtItsFront(sort, dim);
}

}  // namespace exla
