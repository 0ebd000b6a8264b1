#include "model/simplify/loop_forwarding.h"

#include <cstdint>
#include <vector>

#include "analysis/loop_state.h"
#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

// The value the loop read by `read` (a get-tuple-element of a while loop's
// result) starts element `index` from, when its body returns that element
// unchanged; else nullptr. Only loops over a flat state (FlatArrayState),
// so that an element is one buffer and its initial value one instruction.
HloInstruction* UnchangedElementInput(const HloInstruction& read) {
  if (!read.Is(HloOpcode::kGetTupleElement) || !FlatArrayState(*read.operand(0))) return nullptr;
  const HloInstruction& loop = *read.operand(0);
  const HloInstruction* init = loop.operand(0);
  const HloComputation* body = loop.CalledComputation("body");
  const int64_t index = read.IntAttribute("index").value_or(-1);
  if (body == nullptr || index < 0 || index >= init->operand_count()) return nullptr;
  const std::vector<bool> unchanged = PassThroughLeaves(*body);
  if (static_cast<int64_t>(unchanged.size()) != init->operand_count() || !unchanged[index]) {
    return nullptr;
  }
  HloInstruction* input = const_cast<HloInstruction*>(init->operand(static_cast<int>(index)));
  return input->shape() == read.shape() ? input : nullptr;
}

}  // namespace

bool LoopForwarding::Run(HloModule* module) { return ApplyReplacements(module, UnchangedElementInput); }

}  // namespace exla
