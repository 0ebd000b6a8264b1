#include "model/buffers/assignment.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/computation.h"
#include "model/buffers/copies.h"
#include "model/buffers/heap_packing.h"
#include "model/buffers/literals.h"
#include "model/buffers/output_aliasing.h"
#include "model/buffers/result_lending.h"
#include "model/buffers/scratch.h"
#include "model/buffers/tuple_tables.h"

namespace exla {
namespace {

// XLA's CPU backend aligns every buffer of its heap to 64 bytes.
constexpr int64_t kAlignment = 64;

// What one set of aliased leaves (one buffer) has, merged over its leaves.
struct Group {
  int64_t bytes = 0;
  int64_t start = -1;
  int64_t end = -1;
  bool materialised = false;  // some leaf is written to memory
  bool argument = false;      // an entry parameter
  bool constant = false;      // a literal
  bool output = false;        // an entry result
  bool donated = false;       // an entry result in a parameter's buffer (input_output_alias)
  std::vector<int> writers;   // the leaves written to memory

  bool IsTemporary() const { return materialised && !argument && !constant && !output; }
};

// Adds leaf `i` to its buffer's group.
void AddLeaf(const BufferAnalyses& a, int i, Group* g) {
  const HloInstruction* instruction = a.leaves.leaf(i).instruction;
  const int64_t start = a.schedule.Start(instruction);
  g->start = g->start < 0 ? start : std::min(g->start, start);
  g->end = std::max({g->end, a.last_use[i], start});
  auto copied = a.loop_state.copied_from.find(i);
  if (copied != a.loop_state.copied_from.end()) g->start = std::min(g->start, copied->second);
  const Holding h = a.fusion.HoldingOf(instruction);
  const bool own = h == Holding::kOwn || instruction->Is(HloOpcode::kWhile) ||
                   instruction->Is(HloOpcode::kConditional);
  if (own && !a.fusion.FoldedAway(instruction)) {
    g->materialised = true;
    g->bytes = std::max(g->bytes, a.leaves.leaf(i).bytes);
    g->writers.push_back(i);
  }
  if (h == Holding::kParameter && instruction->parent() == a.module.entry()) g->argument = true;
  if (h == Holding::kConstant) g->constant = true;
}

// The groups of the module's buffers, by union-find root.
std::unordered_map<int, Group> Groups(const BufferAnalyses& a) {
  std::unordered_map<int, Group> groups;
  for (int i = 0; i < static_cast<int>(a.leaves.size()); ++i) AddLeaf(a, i, &groups[a.leaves.Find(i)]);
  const std::vector<const Shape*> aliased = AliasedOutputs(a.module);
  for (int leaf : a.leaves.LeavesOf(a.module.entry()->root())) {
    Group& g = groups[a.leaves.Find(leaf)];
    g.output = true;
    g.donated = g.donated || std::find(aliased.begin(), aliased.end(), a.leaves.leaf(leaf).shape) != aliased.end();
  }
  return groups;
}

// The buffer of a group of leaves, its writers in schedule order.
HeapBuffer ValueBuffer(const BufferAnalyses& a, const Group& g) {
  std::vector<int> writers = g.writers;
  std::stable_sort(writers.begin(), writers.end(), [&a](int x, int y) {
    return a.schedule.Start(a.leaves.leaf(x).instruction) < a.schedule.Start(a.leaves.leaf(y).instruction);
  });
  HeapBuffer buffer{{g.bytes, g.start, g.end}, HeapBuffer::Kind::kValue, {}, {}, {}};
  for (int leaf : writers) {
    buffer.writers.push_back(a.leaves.leaf(leaf).instruction);
    buffer.shapes.push_back(a.leaves.leaf(leaf).shape);
    buffer.steps.push_back(a.schedule.Start(a.leaves.leaf(leaf).instruction));
  }
  return buffer;
}

// The buffers beside the values, instruction by instruction in schedule
// order (the order breaks ties in the packing), then those of the module.
void AddBuffersBesideValues(const BufferAnalyses& a, std::vector<HeapBuffer>* temporaries) {
  DotOperandCopies dot_copies;
  for (const auto& [step, instruction] : a.schedule.ByStep()) {
    AddExpansionBuffers(a, *instruction, step, temporaries);
    if (instruction->Is(HloOpcode::kConditional)) {
      AddConditionalTables(a, *instruction, step, temporaries);
      AddConditionalOperandCopies(a, *instruction, step, temporaries);
    }
    if (instruction->Is(HloOpcode::kDot)) dot_copies.Add(a, *instruction, step, temporaries);
    AddTupleTable(a, *instruction, step, temporaries);
  }
  AddEarlyExpansionValues(a, temporaries);
  AddStateReadCopies(a, temporaries);
  AddRotatedCopies(a, temporaries);
}

// Where XLA's buffer assigner ranks a buffer among buffers of one size:
// the first of its writers in the post order of the computations (callers
// before the computations they call). A copy the model adds for a dot's
// operand comes just before the dot, that of operand 0 first.
class PostOrderPositions {
 public:
  explicit PostOrderPositions(const ModuleSchedule& schedule) {
    for (const HloComputation* computation : schedule.computations) {
      for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        position_.emplace(instruction, 4 * static_cast<int64_t>(position_.size()) + 3);
      }
    }
  }

  int64_t Of(const HeapBuffer& buffer) const {
    int64_t position = INT64_MAX;
    for (const HloInstruction* writer : buffer.writers) {
      auto it = position_.find(writer);
      if (it == position_.end()) continue;
      int64_t at = it->second;
      if (buffer.one_value && writer->Is(HloOpcode::kDot)) at -= 2;
      position = std::min(position, at);
    }
    return position;
  }

 private:
  std::unordered_map<const HloInstruction*, int64_t> position_;
};

// XLA places a temporary in the allocation of an entry result that is
// not alive while it is (result_lending.h): it leaves the heap.
// `results`: the results' buffers.
void DropLentTemporaries(const BufferAnalyses& a, const std::vector<HeapBuffer>& results,
                         std::vector<HeapBuffer>* temporaries) {
  const PostOrderPositions positions(a.schedule);
  std::vector<AssignedBuffer> assigned;
  for (const HeapBuffer& result : results) assigned.push_back({result.life, true, positions.Of(result)});
  for (const HeapBuffer& buffer : *temporaries) {
    // Tuple tables have allocations of their own; scratch stands for
    // values the model does not place one by one.
    const bool value = buffer.kind == HeapBuffer::Kind::kValue || buffer.one_value;
    assigned.push_back({value ? buffer.life : BufferLife{}, false, positions.Of(buffer)});
  }
  const std::vector<bool> lent = LentResultAllocations(assigned, ExpansionSteps(a.schedule));
  std::vector<HeapBuffer> kept;
  for (size_t i = 0; i < temporaries->size(); ++i) {
    if (!lent[results.size() + i]) kept.push_back(std::move((*temporaries)[i]));
  }
  *temporaries = std::move(kept);
}

// The figures XLA holds for the whole run: arguments, outputs, literals.
void FixedFigures(const BufferAnalyses& a, MemoryPrediction* p) {
  const HloComputation& entry = *a.module.entry();
  for (const HloInstruction* parameter : entry.parameters()) {
    p->argument_bytes += parameter->shape().ByteSize() + TupleTableBytes(parameter->shape());
  }
  p->output_bytes = entry.root()->shape().ByteSize() + TupleTableBytes(entry.root()->shape());
  p->alias_bytes = AliasedOutputBytes(a.module);
  p->constant_bytes =
      KeptLiteralBytes(a.schedule.computations, [&a](const HloInstruction& i) { return a.fusion.FoldedAway(&i); });
}

// The heap the temporaries pack into, the tables beside it.
void PackTemporaries(const std::vector<HeapBuffer>& temporaries, MemoryPrediction* p) {
  std::vector<BufferLife> lives, heap;
  std::vector<int64_t> tables;  // allocations of their own (heap_packing.h)
  for (const HeapBuffer& buffer : temporaries) {
    lives.push_back(buffer.life);
    if (buffer.kind == HeapBuffer::Kind::kTupleTable) {
      tables.push_back(buffer.life.bytes);
    } else {
      heap.push_back(buffer.life);
    }
  }
  p->buffers = static_cast<int64_t>(lives.size());
  p->live_bytes = PeakLiveBytes(lives);
  p->temp_bytes = CombinedTempBytes(PackedHeapBytes(heap, kAlignment), tables, kAlignment);
}

}  // namespace

ModuleBuffers AssignBuffers(const BufferAnalyses& a) {
  ModuleBuffers buffers;
  FixedFigures(a, &buffers.prediction);
  std::vector<HeapBuffer>& temporaries = buffers.temporaries;
  std::vector<HeapBuffer> results;
  for (const auto& [root, g] : Groups(a)) {
    if (g.IsTemporary() && g.bytes > 0) temporaries.push_back(ValueBuffer(a, g));
    // A result of its own allocation (not a parameter's, not a literal).
    if (g.output && g.materialised && !g.argument && !g.constant && !g.donated && g.bytes > 0) {
      results.push_back(ValueBuffer(a, g));
    }
  }
  AddBuffersBesideValues(a, &temporaries);
  // In schedule order: the packing breaks ties by this order, which must
  // not depend on where the instructions happen to sit in memory.
  std::stable_sort(temporaries.begin(), temporaries.end(), [](const HeapBuffer& x, const HeapBuffer& y) {
    return std::make_tuple(x.life.start, x.life.end, x.life.bytes, static_cast<int>(x.kind)) <
           std::make_tuple(y.life.start, y.life.end, y.life.bytes, static_cast<int>(y.kind));
  });
  DropLentTemporaries(a, results, &temporaries);
  PackTemporaries(temporaries, &buffers.prediction);
  buffers.schedule = a.schedule.steps;
  return buffers;
}

}  // namespace exla
