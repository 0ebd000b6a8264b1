#include "model/buffers/leaf_buffers.h"

#include "analysis/shape_leaves.h"
#include "model/expand/leaf_bytes.h"

namespace exla {

const std::vector<int>& LeafBuffers::LeavesOf(const HloInstruction* instruction) {
  auto it = leaves_.find(instruction);
  if (it != leaves_.end()) return it->second;
  std::vector<int64_t> bytes;
  FlattenLeaves(instruction->shape(), &bytes);
  std::vector<const Shape*> shapes;
  FlattenLeafShapes(instruction->shape(), &shapes);
  std::vector<int>& ids = leaves_[instruction];
  for (size_t i = 0; i < bytes.size(); ++i) {
    ids.push_back(static_cast<int>(leaf_.size()));
    leaf_.push_back({instruction, shapes[i], LeafBytes(*instruction, static_cast<int64_t>(i), bytes[i])});
    parent_.push_back(static_cast<int>(parent_.size()));
  }
  return ids;
}

int LeafBuffers::Find(int leaf) {
  while (parent_[leaf] != leaf) leaf = parent_[leaf] = parent_[parent_[leaf]];
  return leaf;
}

void LeafBuffers::UnionRange(const HloInstruction* instruction, int64_t first, const HloInstruction* other) {
  const std::vector<int>& mine = LeavesOf(instruction);
  const std::vector<int>& theirs = LeavesOf(other);
  for (size_t i = 0; i < theirs.size() && first + static_cast<int64_t>(i) < static_cast<int64_t>(mine.size()); ++i) {
    Union(mine[first + i], theirs[i]);
  }
}

}  // namespace exla
