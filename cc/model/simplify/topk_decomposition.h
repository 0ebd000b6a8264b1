// XLA's decomposition of a top-k it has no kernel for, where only its
// values are read.
//
// XLA CPU's top-k kernel takes f32 keys; XLA decomposes any other top-k
// into a sort and slices of the sort's first k columns. When nothing reads
// the top-k's indices, the sort is of the keys alone (XLA's TopkDecomposer
// adds the iota of indices only for a top-k whose indices are read), and
// the sort, like any sort, writes over an operand that dies there
// (measured: an f64 top-k of the 102,960-byte product of a dot, whose
// values alone are read, holds the product and the 12,480 bytes of the
// values, nothing for indices). The memory model predicts the module so
// decomposed; a top-k whose indices are read keeps its expansion's scratch
// (expand/expansions.h).
#ifndef EXLA_MODEL_SIMPLIFY_TOPK_DECOMPOSITION_H_
#define EXLA_MODEL_SIMPLIFY_TOPK_DECOMPOSITION_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces every top-k of keys other than f32 whose indices nothing reads
// by a sort of its keys along their last dimension (by a comparator that
// puts the larger first, or the smaller for the smallest k) and a slice of
// the sort's first k columns, and removes what that leaves dead.
class TopKDecomposition : public HloPass {
 public:
  std::string_view name() const override { return "topk-decomposition"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_TOPK_DECOMPOSITION_H_
