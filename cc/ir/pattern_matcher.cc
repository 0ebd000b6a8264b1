#include "ir/pattern_matcher.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace exla {

std::optional<double> SplatConstantValue(const HloInstruction* h) {
  std::vector<const HloInstruction*> converts;
  // Converts and reshapes keep the element count; a broadcast must spread
  // a single element.
  while (h->operand_count() == 1 &&
         (h->Is(HloOpcode::kConvert) || h->Is(HloOpcode::kReshape) ||
          (h->Is(HloOpcode::kBroadcast) && h->operand(0)->shape().IsArray() &&
           h->operand(0)->shape().ElementCount() == 1))) {
    if (h->Is(HloOpcode::kConvert)) converts.push_back(h);
    h = h->operand(0);
  }
  if (!h->Is(HloOpcode::kConstant) || !h->shape().IsArray() || h->shape().ElementCount() != 1) {
    return std::nullopt;
  }
  // A literal of rank n > 0 nests its one value in n pairs of braces.
  const std::string& text = h->payload();
  const size_t first = text.find_first_not_of("{ ");
  if (first == std::string::npos) return std::nullopt;
  const char* begin = text.c_str() + first;
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  // The innermost convert applies first.
  for (auto it = converts.rbegin(); it != converts.rend(); ++it) {
    const PrimitiveType type = (*it)->shape().element_type();
    if (type == PrimitiveType::kPred) {
      value = value != 0 ? 1 : 0;
    } else if (IsIntegralType(type)) {
      value = std::trunc(value);
    }
  }
  return value;
}

namespace m {
namespace {

bool IsValuePreservingConvert(const HloInstruction* h) {
  if (!h->Is(HloOpcode::kConvert)) return false;
  PrimitiveType from = h->operand(0)->shape().element_type();
  PrimitiveType to = h->shape().element_type();
  return from == to || (FloatRung(from) > 0 && FloatRung(to) > FloatRung(from));
}

}  // namespace

bool MovesNoElement(const HloInstruction* h) {
  if (h->operand_count() != 1 || !h->shape().IsArray() || !h->operand(0)->shape().IsArray()) return false;
  const Shape& operand = h->operand(0)->shape();
  if (h->shape().dims() != operand.dims() || h->shape().element_type() != operand.element_type()) return false;
  switch (h->opcode()) {
    case HloOpcode::kConvert:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
      return true;
    case HloOpcode::kTranspose:
      return IsIdentityPermutation(h->dimensions());
    default:
      return false;
  }
}

bool IsNoOp(const HloInstruction* h) {
  const bool reshape_or_transpose = h->Is(HloOpcode::kReshape) || h->Is(HloOpcode::kTranspose);
  return IsValuePreservingConvert(h) || (reshape_or_transpose && MovesNoElement(h));
}

bool IsDegenerateReshape(const HloInstruction* h) {
  if (!h->Is(HloOpcode::kReshape) || !h->operand(0)->shape().IsArray()) return false;
  auto non_unit = [](const Shape& shape) {
    std::vector<int64_t> extents;
    for (int64_t extent : shape.dims()) {
      if (extent != 1) extents.push_back(extent);
    }
    return extents;
  };
  return non_unit(h->operand(0)->shape()) == non_unit(h->shape());
}

}  // namespace m
}  // namespace exla
