#include "analysis/selections.h"

#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

// A reducer that returns one of its two (value, index) pairs: the root is
// a tuple of two selects, on the values and on the indices (TensorFlow's
// index select may pick the minimum of both indices on a tie).
bool IsArgReducer(const HloComputation* reducer) {
  if (reducer == nullptr || reducer->root() == nullptr) return false;
  return Match(reducer->root(), m::Tuple(m::OpWithOpcode(HloOpcode::kSelect),
                                         m::OpWithOpcode(HloOpcode::kSelect)));
}

}  // namespace

bool IsTopK(const HloInstruction& instruction) {
  return Match(const_cast<HloInstruction*>(&instruction),
               m::OpWithOpcode(HloOpcode::kTopK, m::Op().IsArray()));
}

int64_t TopKSize(const HloInstruction& topk) {
  const std::optional<std::string> text = topk.RawAttribute("k");
  if (!text.has_value() || text->empty() ||
      text->find_first_not_of("0123456789") != std::string::npos || text->size() > 18) {
    return 0;
  }
  return std::stoll(*text);
}

std::optional<PrimitiveType> SameWidthInt(PrimitiveType type) {
  switch (PrimitiveTypeBitWidth(type)) {
    case 16:
      return PrimitiveType::kS16;
    case 32:
      return PrimitiveType::kS32;
    case 64:
      return PrimitiveType::kS64;
    default:
      return std::nullopt;
  }
}

bool MergeableValueType(PrimitiveType type) {
  if (IsFloatingPointType(type)) return SameWidthInt(type).has_value();
  return type == PrimitiveType::kS32 || type == PrimitiveType::kS64;
}

bool IsArgReduce(const HloInstruction& instruction, int64_t dim) {
  HloInstruction* values = nullptr;
  HloInstruction* indices = nullptr;
  const auto pattern =
      m::Reduce(m::Op(&values).IsArray(), m::Op(&indices).IsArray(), m::Op().IsScalar(),
                m::Op().IsScalar())
          .WithPredicate([dim](const HloInstruction* h) {
            return h->dimensions() == std::vector<int64_t>{dim};
          });
  return Match(const_cast<HloInstruction*>(&instruction), pattern) &&
         IsIntegralType(indices->shape().element_type()) &&
         IsArgReducer(instruction.CalledComputation("to_apply"));
}

bool IsMergedSelection(const HloInstruction& instruction, int operand_index, int64_t dim) {
  if (operand_index < 0) return false;
  if (IsTopK(instruction)) {
    const Shape& operand = instruction.operand(0)->shape();
    return operand_index == 0 && dim == operand.rank() - 1 && TopKSize(instruction) > 0 &&
           MergeableValueType(operand.element_type());
  }
  return operand_index < 2 && IsArgReduce(instruction, dim);
}

}  // namespace exla
