#include "model/fusion/reader_duplication.h"

#include <algorithm>
#include <unordered_set>

#include "ir/computation.h"
#include "model/fusion/globally_unfusible.h"
#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// Whether `reader` computes its result in a loop that takes in every use
// it makes of `producer`.
bool TakesInEveryUse(const HloInstruction& reader, const HloInstruction& producer) {
  if (!FusesProducers(reader)) return false;
  for (int i = 0; i < reader.operand_count(); ++i) {
    if (reader.operand(i) == &producer && !FusesOperand(reader, i)) return false;
  }
  return true;
}

// A scalar: a copy of it moves only scalars' lifetimes, no bytes worth a
// buffer, while the model's extra reader order shifts its heap packing by a
// line (jax_mlp_grad[rewritten], whose counter + 1 XLA also shares with the
// loop's next counter by common subexpressions). Kept as the one buffer.
bool IsScalar(const HloInstruction& producer) {
  return producer.shape().IsArray() && producer.shape().ElementCount() == 1;
}

// A reshape or bitcast of one operand: a bitcast once XLA has assigned
// layouts, which fusion takes into a loop with the producer it views.
bool IsReshapeView(const HloInstruction& instruction) {
  return (instruction.Is(HloOpcode::kReshape) || instruction.Is(HloOpcode::kBitcast)) &&
         instruction.operand_count() == 1 && HoldingOf(instruction) == Holding::kOperand;
}

// How many readers `value` has that are not reshape views of it, counting
// the readers of those views; -1 where such a view is a result.
int ReadersThroughViews(const HloInstruction& value) {
  int readers = 0;
  for (const HloInstruction* user : value.users()) {
    if (!IsReshapeView(*user)) {
      ++readers;
      continue;
    }
    if (user->parent()->root() == user) return -1;
    const int through = ReadersThroughViews(*user);
    if (through < 0) return -1;
    readers += through;
  }
  return readers;
}

}  // namespace

const HloInstruction& ViewedProducer(const HloInstruction& value) {
  const HloInstruction* producer = &value;
  while (IsReshapeView(*producer)) producer = producer->operand(0);
  return *producer;
}

bool DuplicatedIntoReader(const HloInstruction& read, const HloInstruction& reader) {
  const HloInstruction& producer = ViewedProducer(read);
  if (producer.parent()->root() == &producer || ReadersThroughViews(producer) < 2) return false;
  // An outer product is a multiply of two broadcasts by the time XLA fuses.
  const bool elementwise = producer.IsElementwise() || IsOuterProduct(producer);
  // A transpose of an expensive value is not copied: XLA writes the value
  // and its transpose both (two buffers of fuzz_43000000120's log).
  const bool moves = producer.Is(HloOpcode::kBroadcast) ||
                     (producer.Is(HloOpcode::kTranspose) && !IsExpensive(*producer.operand(0)));
  if (!(elementwise || moves) || IsExpensive(producer) || HoldingOf(producer) != Holding::kOwn) {
    return false;
  }
  if (IsScalar(producer)) return false;
  if (CopiesReadMore(producer)) return false;
  return TakesInEveryUse(reader, read);
}

}  // namespace exla
