// The module as XLA's CPU pipeline has it when it starts fusing.
//
// Before fusion, XLA rewrites a module in ways that decide its memory:
// loops of one trip become their bodies, calls are inlined, cheap
// conditionals become selects, literals and reads of tuples are folded,
// reads of what a loop leaves unchanged move to the loop's input, sorts lose
// the arrays nothing reads, common subexpressions merge. The model mirrors
// each as an HloPass (one file each, in this folder) and runs them, in
// XLA's order, on a copy of the module; the later stages predict that copy.
#ifndef EXLA_MODEL_SIMPLIFY_SIMPLIFICATION_H_
#define EXLA_MODEL_SIMPLIFY_SIMPLIFICATION_H_

#include <memory>
#include <set>
#include <string>

#include "ir/module.h"

namespace exla {

struct SimplifiedModule {
  std::unique_ptr<HloModule> module;
  // The signatures of the expansions XLA leaves calls (expansion_calls.h),
  // recorded after inlining, before CSE merges any.
  std::set<std::string> shared_expansions;
};

// A copy of `module` simplified as XLA's CPU pipeline simplifies it before
// fusion.
SimplifiedModule SimplifyAsXla(const HloModule& module);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_SIMPLIFICATION_H_
