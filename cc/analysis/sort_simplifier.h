// XLA's sort simplifier, before fusion.
//
// A sort of several arrays (keys and the values that travel with them)
// writes one buffer per array. XLA's simplification pipeline drops the
// arrays whose sorted result nothing reads and the comparator ignores: a
// top-k lowered as a sort of the values with an iota of their indices,
// of which the program keeps only the values, becomes a sort of the values
// alone, and the iota goes with it. XLA first folds each read of an element
// of a tuple built in place into that element (its tuple simplifier) and
// removes what is left dead, so an index array handed through a tuple
// that is then taken apart counts as unread. The memory model predicts the
// module as XLA fuses it, without those buffers.
#ifndef EXLA_ANALYSIS_SORT_SIMPLIFIER_H_
#define EXLA_ANALYSIS_SORT_SIMPLIFIER_H_

#include "ir/module.h"

namespace exla {

// Whether some computation of `module` sorts several arrays together (the
// only sorts the simplifier may shrink).
bool HasMultiArraySorts(const HloModule& module);

// In each computation with such a sort: folds element reads of tuples
// built in place, removes dead instructions, then rebuilds every sort
// with only the arrays whose results are read or that its comparator
// reads (one array: an array-shaped sort), and removes what that leaves
// dead (the iota of indices). In place.
void RemoveUnreadSortArrays(HloModule* module);

}  // namespace exla

#endif  // EXLA_ANALYSIS_SORT_SIMPLIFIER_H_
