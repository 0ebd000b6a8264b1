// A framework's cast of a value to the type it already has (TensorFlow's
// Mean casts its input and its count): XLA's simplifier removes it
// (AlgebraicSimplifier::HandleConvert) before its other rewrites look at
// the instructions around it.
#ifndef EXLA_MODEL_SIMPLIFY_IDENTITY_CONVERTS_H_
#define EXLA_MODEL_SIMPLIFY_IDENTITY_CONVERTS_H_

#include "ir/instruction.h"

namespace exla {

// `value` without the conversions to its own element type above it.
HloInstruction* WithoutIdentityConverts(HloInstruction* value);

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_IDENTITY_CONVERTS_H_
