#include "model/simplify/tuple_simplifier.h"

#include <cstdint>

#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

// The element `read` takes of a tuple built in place, or nullptr.
HloInstruction* ReadElement(const HloInstruction& read) {
  if (!read.Is(HloOpcode::kGetTupleElement) || !read.operand(0)->Is(HloOpcode::kTuple)) return nullptr;
  const HloInstruction* tuple = read.operand(0);
  const int64_t index = read.IntAttribute("index").value_or(-1);
  return index >= 0 && index < tuple->operand_count() ? tuple->operand(static_cast<int>(index)) : nullptr;
}

}  // namespace

bool TupleSimplifier::Run(HloModule* module) { return ApplyReplacements(module, ReadElement); }

}  // namespace exla
