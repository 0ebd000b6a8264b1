// How a split dimension flows through one instruction.
//
// The tensor splitter follows one dimension of an oversized tensor through the
// program: up to the producers that can be sliced cheaply and down to the
// consumer that makes the tensor small again. These functions answer, for a
// single instruction, "which dimension of the operand (or result) is this
// dimension?" and "does the instruction reduce it away?". Anything they do not
// understand is reported as NotSplittable, and the splitter then leaves the
// program as it was.
#ifndef EXLA_ANALYSIS_DIMENSION_MAP_H_
#define EXLA_ANALYSIS_DIMENSION_MAP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/instruction.h"
#include "pass/why_not.h"

namespace exla {

// Where a split dimension goes through one instruction. Real dimension
// numbers and the special answers have different kinds, so that "no
// dimension" can never be used as an index by mistake.
class DimensionMapping {
 public:
  enum class Kind {
    kDimension,      // this dimension (of the operand or the result)
    kUsedWhole,      // the operand does not carry it: every slice uses all of it
    kReducedAway,    // the result no longer has it: partial results accumulate
    kNotSplittable,  // slices cannot be computed independently
  };
  static DimensionMapping Dimension(int64_t dim) { return DimensionMapping(Kind::kDimension, dim); }
  static DimensionMapping UsedWhole() { return DimensionMapping(Kind::kUsedWhole, -1); }
  static DimensionMapping ReducedAway() { return DimensionMapping(Kind::kReducedAway, -1); }
  static DimensionMapping NotSplittable() { return DimensionMapping(Kind::kNotSplittable, -1); }

  Kind kind() const { return kind_; }
  bool is_dimension() const { return kind_ == Kind::kDimension; }
  bool is_used_whole() const { return kind_ == Kind::kUsedWhole; }
  bool is_reduced_away() const { return kind_ == Kind::kReducedAway; }
  bool is_not_splittable() const { return kind_ == Kind::kNotSplittable; }
  // The dimension number; only for is_dimension().
  int64_t dimension() const;

  bool operator==(const DimensionMapping& other) const {
    return kind_ == other.kind_ && dim_ == other.dim_;
  }
  bool operator!=(const DimensionMapping& other) const { return !(*this == other); }
  // Any strict order, so that mappings can key a std::map.
  bool operator<(const DimensionMapping& other) const {
    return kind_ != other.kind_ ? kind_ < other.kind_ : dim_ < other.dim_;
  }
  // "dimension 2", "used whole", "reduced away", "not splittable".
  std::string ToString() const;

 private:
  DimensionMapping(Kind kind, int64_t dim) : kind_(kind), dim_(dim) {}
  Kind kind_;
  int64_t dim_;
};

// The operand dimension that result dimension `dim` of `instruction` comes
// from, for operand `operand_index`: Dimension(d), UsedWhole if that operand
// is used whole for every slice, NotSplittable if slicing the result along
// `dim` cannot be computed from slices of the operands.
DimensionMapping OperandDimension(const HloInstruction& instruction, int64_t dim, int operand_index);

// The result dimension that operand dimension `dim` (of operand
// `operand_index`) becomes: Dimension(d), ReducedAway if the instruction
// sums/maxes it away, NotSplittable if the instruction cannot be computed
// slice by slice.
DimensionMapping ResultDimension(const HloInstruction& instruction, int operand_index, int64_t dim);

// For a reduce/dot that reduces the split dimension: the elementwise opcode
// that combines partial results (kAdd, kMaximum, ...), or nullopt if partial
// results cannot be combined (non-associative reducer, non-identity init).
std::optional<HloOpcode> AccumulationOpcode(const HloInstruction& instruction);

// Whether the splitter knows how to slice `instruction` at all, and if not
// why (for log lines).
WhyNot SplitterHandles(const HloInstruction& instruction);

}  // namespace exla

#endif  // EXLA_ANALYSIS_DIMENSION_MAP_H_
