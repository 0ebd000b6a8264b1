// XLA's tuple simplifier, before fusion.
//
// Frameworks pass values through tuples that are taken apart right away:
// JAX's and TensorFlow's control flow, a call's result once the call is
// inlined, a loop of one trip replaced by its body. XLA's simplification
// pipeline folds every read of an element of a tuple built in place into
// that element and removes what is left dead, so the tuple no longer holds
// its elements alive (nor needs a table of pointers), and a value only the
// tuple read disappears. The memory model predicts the module so folded.
#ifndef EXLA_MODEL_SIMPLIFY_TUPLE_SIMPLIFIER_H_
#define EXLA_MODEL_SIMPLIFY_TUPLE_SIMPLIFIER_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Folds get-tuple-element(tuple(a, b), 1) into b everywhere and removes the
// instructions left dead.
class TupleSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_TUPLE_SIMPLIFIER_H_
