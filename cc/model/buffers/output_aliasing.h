// The results a module hands back in a parameter's buffer.
//
// A module's header may name, in `input_output_alias`, results that XLA
// writes into the buffer of a parameter (a donated argument): those bytes
// are counted among the arguments, not again among the outputs.
#ifndef EXLA_MODEL_BUFFERS_OUTPUT_ALIASING_H_
#define EXLA_MODEL_BUFFERS_OUTPUT_ALIASING_H_

#include <cstdint>
#include <vector>

#include "ir/module.h"

namespace exla {

// Bytes of the entry's results that the header's input_output_alias gives
// a parameter's buffer: `{ {0}: (1, {}, may-alias), {2}: (0, {}) }`.
int64_t AliasedOutputBytes(const HloModule& module);

// The parts of the entry's result shape (pointers into it) that the
// header gives a parameter's buffer.
std::vector<const Shape*> AliasedOutputs(const HloModule& module);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_OUTPUT_ALIASING_H_
