// XLA sorts nothing along a dimension of one element.
//
// XLA's algebraic simplifier replaces a sort along a dimension of size 1
// by its operands (AlgebraicSimplifierVisitor::HandleSort): each row is
// already in order. A top-k along such a dimension (k = 1) goes the same
// way: XLA CPU's TopkDecomposer makes it a sort of the keys with an iota of
// their indices, then slices of its first column, and once the sort is
// gone the values are the keys and the indices the iota, zeros. The memory
// model must see it: as a sort or a top-k, each result is a buffer of its
// own (the exla tensor-splitter's loops take top-ks of one column per
// trip), where XLA fuses the keys into their readers and stores nothing.
#ifndef EXLA_MODEL_SIMPLIFY_SORT_OF_ONE_H_
#define EXLA_MODEL_SIMPLIFY_SORT_OF_ONE_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Makes the readers of a sort or top-k along a dimension of size 1 read
// its operands (a top-k's indices: an iota along that dimension), and
// removes what that leaves dead. A tuple-shaped result read other than
// through get-tuple-element is left.
class SortOfOne : public HloPass {
 public:
  std::string_view name() const override { return "sort-of-one"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_SORT_OF_ONE_H_
