#include "analysis/loop_state.h"

#include <cstdint>

#include "analysis/tuple_tables.h"

namespace exla {
namespace {

// Whether `value` is the element at `path` of `parameter`, read unchanged.
bool ReadsParameterAt(const HloInstruction* value, const std::vector<int64_t>& path,
                      const HloInstruction* parameter) {
  value = StripIdentity(value);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!value->Is(HloOpcode::kGetTupleElement) || value->IntAttribute("index").value_or(-1) != *it) return false;
    value = value->operand(0);
  }
  return value == parameter;
}

// Appends, for each leaf of `value` (the part at `path` of the body's
// result), whether it is the same part of the parameter.
void Collect(const HloInstruction* value, std::vector<int64_t>* path, const HloInstruction* parameter,
             std::vector<bool>* leaves) {
  if (value->Is(HloOpcode::kTuple)) {
    for (int i = 0; i < value->operand_count(); ++i) {
      path->push_back(i);
      Collect(value->operand(i), path, parameter, leaves);
      path->pop_back();
    }
    return;
  }
  const bool passes = ReadsParameterAt(value, *path, parameter);
  leaves->insert(leaves->end(), LeafCount(value->shape()), passes);
}

}  // namespace

const HloInstruction* StripIdentity(const HloInstruction* value) {
  while ((value->Is(HloOpcode::kReshape) || value->Is(HloOpcode::kBitcast) || value->Is(HloOpcode::kCopy)) &&
         value->operand_count() == 1) {
    const Shape& from = value->operand(0)->shape();
    const Shape& to = value->shape();
    // A copy or reshape into another layout moves the elements in memory:
    // a transpose, which XLA keeps.
    if (!from.IsArray() || !to.IsArray() || from.dims() != to.dims() || from.element_type() != to.element_type() ||
        from.MinorToMajor() != to.MinorToMajor()) {
      break;
    }
    value = value->operand(0);
  }
  return value;
}

std::vector<bool> PassThroughLeaves(const HloComputation& body) {
  const std::vector<HloInstruction*> parameters = body.parameters();
  if (parameters.empty()) return {};
  std::vector<bool> leaves;
  std::vector<int64_t> path;
  Collect(body.root(), &path, parameters[0], &leaves);
  if (static_cast<int64_t>(leaves.size()) != LeafCount(parameters[0]->shape())) return {};
  return leaves;
}

std::vector<const HloInstruction*> InitialLeaves(const HloInstruction& init) {
  std::vector<const HloInstruction*> leaves;
  // An element read of a tuple built here is that element (XLA's
  // simplifier folds it): TensorFlow rebuilds a tensor list from its parts.
  if (init.Is(HloOpcode::kGetTupleElement) && init.operand(0)->Is(HloOpcode::kTuple)) {
    const int64_t index = init.IntAttribute("index").value_or(-1);
    if (index >= 0 && index < init.operand(0)->operand_count()) {
      return InitialLeaves(*init.operand(0)->operand(static_cast<int>(index)));
    }
  }
  if (!init.Is(HloOpcode::kTuple)) {
    leaves.assign(static_cast<size_t>(LeafCount(init.shape())), init.shape().IsTuple() ? nullptr : &init);
    return leaves;
  }
  for (const HloInstruction* operand : init.operands()) {
    const std::vector<const HloInstruction*> inner = InitialLeaves(*operand);
    leaves.insert(leaves.end(), inner.begin(), inner.end());
  }
  return leaves;
}

}  // namespace exla
