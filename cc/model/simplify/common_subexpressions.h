// XLA's common subexpression elimination, before fusion.
//
// XLA's CPU pipeline runs HloCSE before it fuses: instructions that compute
// the same thing (same opcode, shape, attributes and operands, and called
// computations that are equal) become one. What a framework lowers twice
// (TensorFlow's lgamma and digamma of one argument both expand the same
// series of divisions) is computed once and read by every consumer; an
// expensive value read by several loops is then written to a buffer
// rather than folded into each (fusion/instruction_fusion.h), so merging it changes
// which values get buffers. The memory model predicts the merged module.
#ifndef EXLA_MODEL_SIMPLIFY_COMMON_SUBEXPRESSIONS_H_
#define EXLA_MODEL_SIMPLIFY_COMMON_SUBEXPRESSIONS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Merges instructions XLA's CSE merges into the first of them, and removes
// the instructions left dead.
class CommonSubexpressionElimination : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_COMMON_SUBEXPRESSIONS_H_
