// Creates instructions with correctly inferred shapes.
//
// Passes build new code through this class instead of computing result shapes
// by hand at every call site: a wrong shape is caught by XLA's verifier only
// much later, far from the code that made it.
#ifndef EXLA_IR_BUILDER_H_
#define EXLA_IR_BUILDER_H_

#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/module.h"

namespace exla {

class HloBuilder {
 public:
  explicit HloBuilder(HloComputation* computation) : computation_(computation) {}
  HloComputation* computation() const { return computation_; }

  HloInstruction* Parameter(int64_t number, const Shape& shape, const std::string& name);
  // A scalar constant; integers and booleans are printed exactly, floating
  // point values with enough digits to round-trip.
  HloInstruction* ConstantScalar(PrimitiveType type, double value);
  // An integer index scalar; s32 unless the caller needs offsets past 2^31 - 1.
  HloInstruction* ConstantIndex(int64_t value, PrimitiveType type = PrimitiveType::kS32);

  HloInstruction* Unary(HloOpcode opcode, HloInstruction* operand);
  HloInstruction* Binary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs);
  HloInstruction* Compare(HloInstruction* lhs, HloInstruction* rhs, ComparisonDirection direction);
  HloInstruction* Select(HloInstruction* predicate, HloInstruction* on_true,
                         HloInstruction* on_false);
  HloInstruction* Convert(HloInstruction* operand, PrimitiveType type);

  // `dimensions[i]` is the output dimension that operand dimension i maps to.
  HloInstruction* Broadcast(HloInstruction* operand, const std::vector<int64_t>& output_dims,
                            const std::vector<int64_t>& dimensions);
  HloInstruction* Reshape(HloInstruction* operand, const std::vector<int64_t>& dims);
  HloInstruction* Transpose(HloInstruction* operand, const std::vector<int64_t>& permutation);
  HloInstruction* Slice(HloInstruction* operand, const std::vector<int64_t>& starts,
                        const std::vector<int64_t>& limits);
  // One scalar start index per operand dimension.
  HloInstruction* DynamicSlice(HloInstruction* operand, const std::vector<HloInstruction*>& starts,
                               const std::vector<int64_t>& sizes);
  HloInstruction* DynamicUpdateSlice(HloInstruction* operand, HloInstruction* update,
                                     const std::vector<HloInstruction*>& starts);
  HloInstruction* Concatenate(const std::vector<HloInstruction*>& operands, int64_t dimension);
  HloInstruction* Iota(const Shape& shape, int64_t dimension);

  // Result dimensions: batch, lhs free, rhs free (XLA's convention).
  HloInstruction* Dot(HloInstruction* lhs, HloInstruction* rhs, const DotDimensions& dims,
                      PrimitiveType result_type = PrimitiveType::kInvalid);
  // Reduces one array over `dimensions` with the scalar computation `reducer`.
  HloInstruction* Reduce(HloInstruction* operand, HloInstruction* init,
                         const std::vector<int64_t>& dimensions, HloComputation* reducer);

  HloInstruction* Tuple(const std::vector<HloInstruction*>& elements);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);
  HloInstruction* While(HloInstruction* init, HloComputation* condition, HloComputation* body);

 private:
  HloInstruction* Add(HloOpcode opcode, Shape shape,
                      std::vector<HloInstruction*> operands);
  HloComputation* computation_;
};

// Shape of a dot of `lhs` and `rhs` (see HloBuilder::Dot).
Shape InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensions& dims,
                    PrimitiveType result_type);

// A new computation `(x, y) -> opcode(x, y)` on scalars of `type`, inserted
// before `before` in print order. `opcode` is kAdd, kMaximum, ...
HloComputation* AddScalarReducer(HloModule* module, HloOpcode opcode,
                                 PrimitiveType type, const HloComputation* before);

}  // namespace exla

#endif  // EXLA_IR_BUILDER_H_
