// Typed values of the attributes passes interpret.
//
// The parser decodes these attributes once, when it reads the module
// (attribute_syntax.h checks their syntax first, so that a malformed one is
// reported at its line and column). An instruction keeps both the printed text,
// which the printer writes back unchanged, and the decoded value, which passes
// read; the typed setters of HloInstruction keep the two in step.
#ifndef EXLA_IR_ATTRIBUTES_H_
#define EXLA_IR_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exla {

// One `[start:limit:stride]` entry of a slice attribute.
struct SliceBounds {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};

// XLA's dot dimension numbers, printed as four separate attributes
// (lhs_batch_dims, ...; an empty list is not printed).
struct DotDimensions {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;

  // Operand `k`'s (0: lhs, 1: rhs).
  const std::vector<int64_t>& batch(int k) const { return k == 0 ? lhs_batch : rhs_batch; }
  const std::vector<int64_t>& contracting(int k) const {
    return k == 0 ? lhs_contracting : rhs_contracting;
  }
};

// One `low_high[_interior]` entry of pad's `padding=` attribute.
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool IsZero() const { return low == 0 && high == 0 && interior == 0; }
};
using PaddingConfig = std::vector<PaddingDimension>;

// compare's `direction=`.
enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
std::string_view ComparisonDirectionString(ComparisonDirection direction);  // "EQ", ...
std::optional<ComparisonDirection> StringToComparisonDirection(std::string_view text);

// Whether a floating-point compare orders by IEEE's partial order (NaN
// unordered, -0 == +0) or by the total order (NaNs at the ends, -0 < +0).
// XLA has printed the total order two ways: `type=TOTALORDER` (every XLA
// exla supports parses it; jaxlib <= 0.10 prints it) and `order=TOTAL`
// (jaxlib >= 0.11 prints it, and parses both).
enum class ComparisonOrder { kPartial, kTotal };

// The decoded value of one attribute; monostate for attributes kept only as
// text (metadata, layouts of custom calls, ...).
using TypedAttributeValue = std::variant<std::monostate, std::vector<int64_t>, int64_t,
                                         std::vector<SliceBounds>, PaddingConfig,
                                         ComparisonDirection>;

// Decodes the attribute `key=value`; monostate if `key` is not a typed
// attribute. `value` must have passed CheckTypedAttribute.
TypedAttributeValue DecodeTypedAttribute(std::string_view key, std::string_view value);

// XLA's printed form of typed values.
std::string FormatIntList(const std::vector<int64_t>& values);      // {1,0}
std::string FormatSlice(const std::vector<SliceBounds>& bounds);    // {[0:4], [1:3:2]}

}  // namespace exla

#endif  // EXLA_IR_ATTRIBUTES_H_
