#include "analysis/literals.h"

#include <set>
#include <string>
#include <utility>

#include "analysis/buffer_model.h"

namespace exla {
namespace {

// Whether XLA's fusion puts `instruction` into a fusion: it is folded into
// a reader, or it folds in an operand other than a literal.
bool InFusion(const HloInstruction& instruction, const std::function<bool(const HloInstruction&)>& folded) {
  if (folded(instruction)) return true;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->Is(HloOpcode::kConstant) && folded(*operand)) return true;
  }
  return false;
}

}  // namespace

int64_t KeptLiteralBytes(const std::vector<const HloComputation*>& computations,
                         const std::function<bool(const HloInstruction&)>& folded) {
  int64_t bytes = 0;
  std::set<std::pair<const HloComputation*, std::string>> seen;
  for (const HloComputation* computation : computations) {
    for (const auto& owned : computation->instructions()) {
      const HloInstruction& c = *owned;
      if (!c.Is(HloOpcode::kConstant) || !c.shape().IsArray() || c.users().empty()) continue;
      bool kept = c.shape().rank() > 0;
      for (const HloInstruction* user : c.users()) {
        kept = kept || !FusesProducers(*user) || !InFusion(*user, folded);
      }
      const bool first = seen.insert({computation, c.shape().ToString(false) + " " + c.payload()}).second;
      if (kept && first) bytes += c.shape().ByteSize();
    }
  }
  return bytes;
}

}  // namespace exla
