// Which leaves XLA keeps in one buffer, and the copies its copy insertion
// adds to a loop's state.
//
// A view (bitcast, reshape, tuple, element read) is its operand's buffer;
// a while loop's state is one buffer shared by the loop, its body's and
// condition's parameters and its body's result; a call reads its operands
// where they are and writes its result where the caller's is. Where a loop
// cannot take its initial value in place, or its body returns an element
// in another's place, XLA's copy insertion copies it.
#ifndef EXLA_MODEL_BUFFERS_ALIASING_H_
#define EXLA_MODEL_BUFFERS_ALIASING_H_

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/module.h"
#include "model/buffers/heap_packing.h"
#include "model/buffers/leaf_buffers.h"
#include "model/buffers/module_schedule.h"
#include "model/fusion/fused_module.h"

namespace exla {

// What aliasing found about the module's loops.
struct LoopStateBuffers {
  // The copies XLA makes of the elements a body returns in another
  // element's place, made when the body ends.
  std::vector<BufferLife> rotated_copies;
  // Per leaf of a loop's state whose initial value XLA copies in: the step
  // of the copy (as soon as the value exists, in a breadth-first schedule).
  std::unordered_map<int, int64_t> copied_from;
  // The loops' bodies, and the same in the order they were aliased.
  std::unordered_set<const HloComputation*> bodies;
  std::vector<const HloComputation*> body_order;
};

// Unites the leaves XLA keeps in one buffer, over what `schedule` runs.
LoopStateBuffers AliasBuffers(const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_ALIASING_H_
