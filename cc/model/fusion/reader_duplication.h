// XLA's instruction fusion duplicates a cheap producer into each reader
// that can take it in, even when another reader cannot.
//
// instruction_fusion.h gives a value no buffer when every reader folds it
// in. XLA decides per reader (InstructionFusion::Run, consumers in reverse
// post order): a cheap producer is copied into every consumer whose loop
// can compute it, and written to memory only for the readers that cannot
// (a tree reduction's reduce-window, a GEMM). The readers that copied it
// read its operands instead, which then stay alive until those readers
// run: what a buffer per value misses.
//
// Two rules of XLA bound the copying: an expensive producer is never
// duplicated (ShouldFuse's cost condition), and a producer that reads more
// than one large operand, more elements than it writes, is not duplicated
// unless every reader takes it in (ComputeGloballyUnfusible: copying it
// would read those operands once per reader).
//
// An outer product is one too: XLA's simplifier has rewritten it as a
// multiply of two broadcasts before fusion. A broadcast is such a producer
// too: cheap, and reading no more than it writes; so is a transpose (a
// loop of copies, which XLA computes again from its operand inside each
// elementwise reader). Copied into the readers
// that compute it, it is left with the readers that cannot, such as the
// tuple a loop starts from, which then takes it in place
// (buffers/aliasing.cc).
//
// The model leaves out one case XLA would copy: a scalar producer, whose
// copies move no bytes (reader_duplication.cc).
#ifndef EXLA_MODEL_FUSION_READER_DUPLICATION_H_
#define EXLA_MODEL_FUSION_READER_DUPLICATION_H_

#include "ir/instruction.h"

namespace exla {

// `value` without the reshapes and bitcasts that view it: the producer
// whose buffer they are.
const HloInstruction& ViewedProducer(const HloInstruction& value);

// Whether XLA computes the producer of `read` (read itself, or the value
// it is a reshape of: XLA fuses the bitcast with its producer), which has
// a buffer of its own, again inside the loop of `reader` instead of
// reading that buffer. The producer's readers are counted through such
// views: a softmax's input, reshaped, read by a tree reduction and by the
// loop that subtracts the maximum, is stored for the reduction and
// recomputed in the loop.
bool DuplicatedIntoReader(const HloInstruction& read, const HloInstruction& reader);

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_READER_DUPLICATION_H_
