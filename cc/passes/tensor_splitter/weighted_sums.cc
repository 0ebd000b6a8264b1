#include "passes/tensor_splitter/weighted_sums.h"

#include <algorithm>
#include <utility>

#include "ir/pattern_matcher.h"

namespace exla {
namespace {

// Whether `h` holds the values of `target` in the same order: behind
// reshapes, same-type converts and broadcasts that only add dimensions of
// extent 1 (the shapes JAX moves a per-row sum through).
bool HoldsValuesOf(const HloInstruction* h, const HloInstruction* target) {
  const int64_t count = target->shape().ElementCount();
  while (h != target) {
    if (h->operand_count() != 1 || !h->shape().IsArray() || h->shape().ElementCount() != count ||
        !h->operand(0)->shape().IsArray()) {
      return false;
    }
    const bool same_type = h->shape().element_type() == h->operand(0)->shape().element_type();
    const std::vector<int64_t>& dims = h->dimensions();
    if (!h->Is(HloOpcode::kReshape) && !(h->Is(HloOpcode::kConvert) && same_type) &&
        !(h->Is(HloOpcode::kBroadcast) && std::is_sorted(dims.begin(), dims.end()))) {
      return false;
    }
    h = h->operand(0);
  }
  return true;
}

// `sum`'s value per row broadcast along the normalised dimension `dim`.
bool IsSumAlongRows(const HloInstruction* h, const HloInstruction* sum, int64_t dim) {
  if (!h->Is(HloOpcode::kBroadcast)) return false;
  std::vector<int64_t> rows;
  for (int64_t d = 0; d < h->shape().rank(); ++d) {
    if (d != dim) rows.push_back(d);
  }
  return h->dimensions() == rows && HoldsValuesOf(h->operand(0), sum);
}

// The softmax's terms e (the value the sum reduces) and e / s, each with
// whether it is divided, and each behind converts: what a weighted sum may
// contract.
std::vector<std::pair<HloInstruction*, bool>> Weights(const SoftmaxStatistics& s) {
  HloInstruction* e = s.sum->operand(0);
  std::vector<std::pair<HloInstruction*, bool>> weights = {{e, false}};
  for (HloInstruction* user : e->users()) {
    HloInstruction* dividend = nullptr;
    HloInstruction* divisor = nullptr;
    if (Match(user, m::Divide(m::Op(&dividend), m::Op(&divisor))) && dividend == e &&
        IsSumAlongRows(divisor, s.sum, s.dim)) {
      weights.push_back({user, true});
    }
  }
  for (size_t i = 0, n = weights.size(); i < n; ++i) {
    for (HloInstruction* user : weights[i].first->users()) {
      if (user->Is(HloOpcode::kConvert) && IsFloatingPointType(user->shape().element_type())) {
        weights.push_back({user, weights[i].second});
      }
    }
  }
  return weights;
}

// Whether `dot`, reading the weights as operand `k`, is a weighted sum over
// the normalised dimension, and if so whether the loop can accumulate it.
// `found` is filled for a dot that contracts that dimension alone.
WhyNot Accumulable(const SoftmaxStatistics& s, HloInstruction* dot, int k, WeightedSum* found) {
  const DotDimensions dims = dot->dot_dimensions();
  if (dims.contracting(k) != std::vector<int64_t>{s.dim}) return WhyNot::Ok();  // no such sum
  found->dot = dot;
  found->weights_operand = k;
  found->values_dim = dims.contracting(1 - k)[0];
  const HloInstruction* values = dot->operand(1 - k);
  if (!dot->shape().IsArray() || !IsFloatingPointType(dot->shape().element_type())) {
    return WhyNot::Because(dot->name() + " is not a floating-point array");
  }
  if (DependsOn(values, {s.logits, s.max, s.sum})) {
    return WhyNot::Because(values->name() + ", which " + dot->name() +
                           " weighs, is computed from the logits or their statistics");
  }
  return WhyNot::Ok();
}

}  // namespace

std::vector<WeightedSum> FindWeightedSums(const SoftmaxStatistics& statistics,
                                          const DimensionChoices& chosen,
                                          std::vector<std::string>* notes) {
  std::vector<WeightedSum> sums;
  const std::string prefix = statistics.sum->parent()->name() + "/";
  for (const auto& [weights, normalised] : Weights(statistics)) {
    for (HloInstruction* user : weights->users()) {
      if (!user->Is(HloOpcode::kDot) || user->operand(0) == user->operand(1)) continue;
      WeightedSum found;
      found.normalised = normalised;
      WhyNot why = Accumulable(statistics, user, user->operand(0) == weights ? 0 : 1, &found);
      if (found.dot == nullptr) continue;
      if (!why.ok()) {
        notes->push_back("left " + user->name() + " to a second pass over " +
                         statistics.logits->name() + ": " + why.reason());
        continue;
      }
      auto choice = chosen.find(prefix + user->name());
      if (choice != chosen.end() && choice->second == kTwoPass) continue;
      sums.push_back(found);
    }
  }
  return sums;
}

}  // namespace exla
