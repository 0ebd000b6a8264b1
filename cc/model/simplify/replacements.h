// Rewrites of XLA's simplifiers that share one shape (tuple_simplifier.h,
// loop_forwarding.h, reshape_equivalents.h, transpose_of_dot.h,
// sort_of_one.h): find every instruction that stands for a value another
// holds or computes (one the rewrite adds), and make its readers read that
// value instead.
#ifndef EXLA_MODEL_SIMPLIFY_REPLACEMENTS_H_
#define EXLA_MODEL_SIMPLIFY_REPLACEMENTS_H_

#include <functional>

#include "ir/module.h"

namespace exla {

// What an instruction stands for (its readers may read it instead; the
// function may add it to the instruction's computation), or nullptr where
// it stands for nothing else.
using Replacement = std::function<HloInstruction*(const HloInstruction&)>;

// Makes the readers of every instruction with a replacement read the
// replacement, in place, and removes the instructions left dead. Returns
// whether anything changed.
bool ApplyReplacements(HloModule* module, const Replacement& replacement);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_REPLACEMENTS_H_
