// XLA's conditional simplifier runs a cheap conditional's both branches and
// selects.
//
// A conditional on a boolean whose two branches are cheap (elementwise
// arithmetic, literals and cheap moves of data) becomes both branches,
// inlined, and a select of their results: no branch computations, no
// pointer tables of the conditional's operands and result, one loop that
// fusion can fold the branches into. Runs after the call inliner.
#ifndef EXLA_MODEL_SIMPLIFY_CONDITIONAL_TO_SELECT_H_
#define EXLA_MODEL_SIMPLIFY_CONDITIONAL_TO_SELECT_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

class ConditionalToSelect : public HloPass {
 public:
  std::string_view name() const override { return "conditional-to-select"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_CONDITIONAL_TO_SELECT_H_
