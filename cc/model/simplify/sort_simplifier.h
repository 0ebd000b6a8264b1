// XLA's sort simplifier, before fusion.
//
// A sort of several arrays (keys and the values that travel with them)
// writes one buffer per array. XLA's simplification pipeline drops the
// arrays whose sorted result nothing reads and the comparator ignores: a
// top-k lowered as a sort of the values with an iota of their indices,
// of which the program keeps only the values, becomes a sort of the values
// alone, and the iota goes with it. XLA's tuple simplifier runs first
// (tuple_simplifier.h), so an index array handed through a tuple that is
// then taken apart counts as unread. The memory model predicts the module
// as XLA fuses it, without those buffers.
#ifndef EXLA_MODEL_SIMPLIFY_SORT_SIMPLIFIER_H_
#define EXLA_MODEL_SIMPLIFY_SORT_SIMPLIFIER_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Rebuilds every sort of several arrays with only the arrays whose results
// are read or that its comparator reads (one array: an array-shaped sort),
// and removes what that leaves dead (the iota of indices). Runs on a module
// whose tuples XLA's tuple simplifier has folded.
class SortSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "sort-simplifier"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_SORT_SIMPLIFIER_H_
