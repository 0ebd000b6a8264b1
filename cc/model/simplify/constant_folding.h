// XLA's constant folding, before fusion.
//
// XLA's pipeline evaluates at compile time every instruction that reads
// only literals (at least one literal, the others literals, broadcasts of
// literals or iotas) and replaces it by the literal it computes: the
// transpose of a literal, a product of two, the slices of one. The result
// is a literal of the executable like any other (literals.h), kept in
// memory when it is an array, and no longer a value computed at run time.
// Frameworks that capture data as constants (GPflow's inducing points and
// training inputs, Keras' masks) make many such instructions. XLA does not
// fold broadcasts and iotas (they would only grow), nor loops, random
// numbers or calls into libraries.
#ifndef EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_
#define EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_

#include "ir/module.h"

namespace exla {

// Whether some computation of `module` has an instruction XLA folds.
bool HasFoldableInstructions(const HloModule& module);

// Replaces, in place, every instruction XLA folds by a literal of its shape
// (folding the literals' readers in turn), and removes the instructions
// left dead. The literal's text stands for the expression it was folded
// from, not its value: equal expressions give equal literals.
void FoldConstants(HloModule* module);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_CONSTANT_FOLDING_H_
