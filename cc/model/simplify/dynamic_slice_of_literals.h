// XLA's algebraic simplifier: a dynamic slice at literal offsets is a slice.
//
// AlgebraicSimplifier::HandleDynamicSlice replaces a dynamic-slice whose
// start indices are all literals by a static slice of its operand. What
// matters to memory is when it runs: the slice reads its operand alone, so
// XLA's breadth-first schedule runs it as soon as that operand is ready
// (measured on fuzz_162r: the first slice of an input, whose offset an
// inlined loop of one trip computed as 0 * 35, runs before the broadcasts
// that the same step made ready, and the product that reads it runs before
// the hoisted one). The model keeps no values of folded literals, so the
// slice starts at 0: its shape, all the model reads, is exact.
#ifndef EXLA_MODEL_SIMPLIFY_DYNAMIC_SLICE_OF_LITERALS_H_
#define EXLA_MODEL_SIMPLIFY_DYNAMIC_SLICE_OF_LITERALS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every dynamic-slice whose start indices are literals by a slice
// of the same shape.
class DynamicSliceOfLiterals : public HloPass {
 public:
  std::string_view name() const override { return "dynamic-slice-of-literals"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_DYNAMIC_SLICE_OF_LITERALS_H_
