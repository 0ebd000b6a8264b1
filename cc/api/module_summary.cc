#include "api/exla.h"

#include <memory>
#include <unordered_set>
#include <vector>

#include "analysis/sharding_analysis.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace exla {
namespace {

std::unique_ptr<HloModule> ParseVerified(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  VerifyModuleOrThrow(*module, hlo_text);  // a summary of a malformed module would mislead
  return module;
}

struct LargestTensor {
  int64_t bytes = 0;
  std::string description;
};

void Consider(const HloInstruction& instruction, const ShardingAnalysis& sharding,
              LargestTensor* largest) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return;
  int64_t bytes = sharding.DeviceByteSize(instruction);
  if (bytes > largest->bytes || largest->description.empty()) {
    largest->bytes = bytes;
    largest->description =
        instruction.parent()->name() + "/" + instruction.name() + " " + shape.ToString(false);
  }
}

// Whether XLA gives `value` its operand's buffer: a reshape or bitcast (with
// the default layouts exla's frontends lower to, a reshape is a bitcast), or
// a transpose that keeps every dimension in place (TensorFlow writes one
// before each gradient it returns). XLA's simplifier turns each into a view.
bool IsViewOfOperand(const HloInstruction& value) {
  if (value.operand_count() != 1) return false;
  if (value.Is(HloOpcode::kReshape) || value.Is(HloOpcode::kBitcast)) return true;
  return value.Is(HloOpcode::kTranspose) && IsIdentityPermutation(value.dimensions());
}

// The values whose buffers are the entry computation's result: its root, or
// the elements of a root tuple (nested tuples followed), and what each of
// them is a view of (IsViewOfOperand): XLA writes that value straight into
// the output buffer, so it is an output too, not a temporary beside it.
std::unordered_set<const HloInstruction*> OutputLeaves(const HloModule& module) {
  std::unordered_set<const HloInstruction*> leaves;
  std::vector<const HloInstruction*> pending;
  if (module.entry() != nullptr && module.entry()->root() != nullptr) {
    pending.push_back(module.entry()->root());
  }
  while (!pending.empty()) {
    const HloInstruction* value = pending.back();
    pending.pop_back();
    if (!value->Is(HloOpcode::kTuple)) {
      leaves.insert(value);
      if (IsViewOfOperand(*value)) pending.push_back(value->operand(0));
      continue;
    }
    for (const HloInstruction* element : value->operands()) pending.push_back(element);
  }
  return leaves;
}

}  // namespace

ModuleSummary SummarizeModule(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseVerified(hlo_text);
  const ShardingAnalysis sharding(*module);
  LargestTensor overall, entry;
  ModuleSummary summary;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      ++summary.instructions;
      Consider(*instruction, sharding, &overall);
      if (computation.get() == module->entry()) Consider(*instruction, sharding, &entry);
    }
  }
  summary.name = module->name();
  summary.computations = static_cast<int64_t>(module->computations().size());
  summary.largest_tensor_bytes = overall.bytes;
  summary.largest_tensor = overall.description;
  summary.entry_largest_tensor_bytes = entry.bytes;
  summary.entry_largest_tensor = entry.description;
  summary.sharded = sharding.active();
  summary.devices = sharding.devices();
  return summary;
}

std::vector<TensorSize> TensorSizes(const std::string& hlo_text) {
  std::unique_ptr<HloModule> module = ParseVerified(hlo_text);
  const ShardingAnalysis sharding(*module);
  const std::unordered_set<const HloInstruction*> outputs = OutputLeaves(*module);
  std::vector<TensorSize> sizes;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!instruction->shape().IsArray()) continue;
      sizes.push_back({computation->name(), instruction->name(),
                       std::string(instruction->opcode_name()),
                       sharding.DeviceByteSize(*instruction), instruction->shape().ToString(false),
                       outputs.count(instruction.get()) != 0});
    }
  }
  return sizes;
}

}  // namespace exla
