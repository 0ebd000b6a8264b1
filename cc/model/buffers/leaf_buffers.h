// The arrays a module defines and which of them share a buffer.
//
// Every instruction defines leaves: its arrays and tokens, a tuple's
// flattened (shape_leaves.h). XLA's alias analysis puts leaves that must
// live in one buffer into one set (a view and its operand, a loop's state
// and its body's parameter, a call's result and its root), and buffer
// assignment adds what may share (an update written in place). The sets
// are a union-find over leaf numbers; numbers are given in the order
// leaves are first asked for, which the model keeps deterministic.
#ifndef EXLA_MODEL_BUFFERS_LEAF_BUFFERS_H_
#define EXLA_MODEL_BUFFERS_LEAF_BUFFERS_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// One array (or token) that an instruction defines: a leaf of its shape.
struct Leaf {
  const HloInstruction* instruction = nullptr;
  const Shape* shape = nullptr;
  int64_t bytes = 0;  // as XLA CPU writes it (leaf_bytes.h)
};

class LeafBuffers {
 public:
  // The leaves of `instruction`, numbered on first request.
  const std::vector<int>& LeavesOf(const HloInstruction* instruction);

  // The set (buffer) `leaf` is in, named by one of its leaves.
  int Find(int leaf);

  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

  // Leaves [first, first + count) of `instruction` alias all of `other`'s.
  void UnionRange(const HloInstruction* instruction, int64_t first, const HloInstruction* other);

  // Puts the set named `from` into the set named `to` (both Find's names).
  void Link(int from, int to) { parent_[from] = to; }

  const Leaf& leaf(int i) const { return leaf_[i]; }
  int64_t size() const { return static_cast<int64_t>(leaf_.size()); }

 private:
  std::unordered_map<const HloInstruction*, std::vector<int>> leaves_;
  std::vector<Leaf> leaf_;
  std::vector<int> parent_;
};

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_LEAF_BUFFERS_H_
