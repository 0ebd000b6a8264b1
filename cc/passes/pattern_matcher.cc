#include "passes/pattern_matcher.h"

namespace exla {
namespace m {
namespace {

bool IsValuePreservingConvert(const HloInstruction* h) {
  if (!h->Is(HloOpcode::kConvert)) return false;
  PrimitiveType from = h->operand(0)->shape().element_type();
  PrimitiveType to = h->shape().element_type();
  return from == to || (FloatRung(from) > 0 && FloatRung(to) > FloatRung(from));
}

bool IsIdentityPermutation(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

bool IsNoOp(const HloInstruction* h) {
  bool same_dims = h->operand_count() == 1 && h->operand(0)->shape().IsArray() &&
                   h->operand(0)->shape().dims() == h->shape().dims();
  return IsValuePreservingConvert(h) || (h->Is(HloOpcode::kReshape) && same_dims) ||
         (h->Is(HloOpcode::kTranspose) && IsIdentityPermutation(h->dimensions()));
}

}  // namespace m
}  // namespace exla
