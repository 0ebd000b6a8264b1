#include "model/simplify/sort_of_one.h"

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "model/simplify/replacements.h"

namespace exla {
namespace {

// A sort along a dimension of at most one element, or a top-k (along the
// last dimension) of one.
bool SortsOneElement(const HloInstruction& instruction) {
  if (instruction.operand_count() == 0) return false;
  const Shape& keys = instruction.operand(0)->shape();
  if (!keys.IsArray() || keys.rank() == 0) return false;
  if (instruction.Is(HloOpcode::kTopK)) return keys.dim(keys.rank() - 1) == 1;
  if (!instruction.Is(HloOpcode::kSort)) return false;
  const std::vector<int64_t> dims = instruction.dimensions();
  return dims.size() == 1 && dims[0] >= 0 && dims[0] < keys.rank() && keys.dim(static_cast<int>(dims[0])) <= 1;
}

// The array that result `index` of `sort` (one that sorts one element)
// holds.
HloInstruction* UnsortedResult(HloInstruction* sort, int64_t index, const Shape& shape) {
  if (sort->Is(HloOpcode::kSort)) return sort->operand(static_cast<int>(index));
  if (index == 0) return sort->operand(0);
  HloInstruction* iota = sort->parent()->Add(HloOpcode::kIota, shape, {}, sort->name() + ".indices");
  iota->SetIntAttribute("iota_dimension", shape.rank() - 1);
  return iota;
}

// What `instruction`, a sort of one element or a read of one of its
// results, stands for, or nullptr.
HloInstruction* Unsorted(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kGetTupleElement)) {
    HloInstruction* sort = instruction.operand(0);
    if (!SortsOneElement(*sort)) return nullptr;
    return UnsortedResult(sort, instruction.IntAttribute("index").value_or(0), instruction.shape());
  }
  if (instruction.shape().IsArray() && instruction.Is(HloOpcode::kSort) && SortsOneElement(instruction)) {
    return instruction.operand(0);
  }
  return nullptr;
}

}  // namespace

bool SortOfOne::Run(HloModule* module) { return ApplyReplacements(module, Unsorted); }

}  // namespace exla
