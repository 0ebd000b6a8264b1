#include "analysis/loop_state.h"

#include <cstdint>

#include "analysis/shape_leaves.h"

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

// The first leaf of the part at `path` of `shape`, in the order of the
// flattened leaves; -1 when the path leaves the shape.
int64_t LeafOffset(const Shape& shape, const std::vector<int64_t>& path) {
  int64_t offset = 0;
  const Shape* part = &shape;
  for (int64_t index : path) {
    if (!part->IsTuple() || index < 0 || index >= static_cast<int64_t>(part->tuple_shapes().size())) return -1;
    for (int64_t i = 0; i < index; ++i) offset += LeafCount(part->tuple_shape(i));
    part = &part->tuple_shape(index);
  }
  return offset;
}

// The leaf of `parameter` whose part `value` is, read unchanged through
// element reads, views and tuples built in place (an inlined call's
// result), or -1. `path` is the part of `value` looked for.
int64_t ParameterLeafOf(const HloInstruction* value, std::vector<int64_t> path, const HloInstruction* parameter) {
  for (int depth = 0; depth < 64; ++depth) {
    value = StripIdentity(value);
    if (value == parameter) return LeafOffset(parameter->shape(), path);
    if (value->Is(HloOpcode::kGetTupleElement)) {
      path.insert(path.begin(), value->IntAttribute("index").value_or(-1));
      value = value->operand(0);
    } else if (value->Is(HloOpcode::kTuple) && !path.empty() && path[0] >= 0 &&
               path[0] < value->operand_count()) {
      value = value->operand(static_cast<int>(path[0]));
      path.erase(path.begin());
    } else {
      return -1;
    }
  }
  return -1;
}

// Appends, for each leaf of `value` (a part of the body's result), the
// leaf of the parameter it returns unchanged, or -1.
void CollectReturned(const HloInstruction* value, const HloInstruction* parameter, std::vector<int64_t>* leaves) {
  if (value->Is(HloOpcode::kTuple)) {
    for (const HloInstruction* operand : value->operands()) CollectReturned(operand, parameter, leaves);
    return;
  }
  const int64_t first = ParameterLeafOf(value, {}, parameter);
  for (int64_t i = 0; i < LeafCount(value->shape()); ++i) leaves->push_back(first < 0 ? -1 : first + i);
}

}  // namespace

std::vector<int64_t> ReturnedParameterLeaves(const HloComputation& body) {
  const std::vector<HloInstruction*> parameters = body.parameters();
  if (parameters.empty()) return {};
  std::vector<int64_t> leaves;
  CollectReturned(body.root(), parameters[0], &leaves);
  if (static_cast<int64_t>(leaves.size()) != LeafCount(parameters[0]->shape())) return {};
  return leaves;
}

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

bool FlatArrayState(const HloInstruction& loop) {
  if (!loop.Is(HloOpcode::kWhile) || !loop.shape().IsTuple() ||
      !loop.operand(0)->Is(HloOpcode::kTuple)) {
    return false;
  }
  for (const Shape& element : loop.shape().tuple_shapes()) {
    if (!element.IsArray()) return false;
  }
  return true;
}

}  // namespace exla
