// The figures of XLA's buffer assignment from the model's buffers and lives
// (module_memory.h): which buffers are temporaries, the tuple tables and
// the scratch of expanded instructions beside them, and the heap.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fusion/instruction_fusion.h"
#include "model/expand/convolution_layout.h"
#include "model/fusion/dot_operand_copies.h"
#include "model/simplify/expansion_calls.h"
#include "model/expand/expansions.h"
#include "model/buffers/heap_packing.h"
#include "model/buffers/literals.h"
#include "model/simplify/loop_simplifier.h"
#include "model/buffers/module_memory.h"
#include "model/buffers/output_aliasing.h"
#include "model/buffers/result_lending.h"
#include "analysis/shape_leaves.h"
#include "model/buffers/tuple_tables.h"
#include "ir/computation.h"

namespace exla {
namespace memory_internal {

std::unordered_map<int, Group> ModuleMemory::Groups(const HloComputation& entry) {
  std::unordered_map<int, Group> groups;
  for (size_t i = 0; i < leaf_.size(); ++i) {
    const HloInstruction* instruction = leaf_[i].instruction;
    Group& g = groups[Find(static_cast<int>(i))];
    const int64_t start = start_[instruction];
    g.start = g.start < 0 ? start : std::min(g.start, start);
    g.end = std::max({g.end, last_use_[i], start});
    auto copied = copied_from_.find(static_cast<int>(i));
    if (copied != copied_from_.end()) g.start = std::min(g.start, copied->second);
    const Holding h = HoldingOfCached(instruction);
    const bool own = h == Holding::kOwn || instruction->Is(HloOpcode::kWhile) ||
                     instruction->Is(HloOpcode::kConditional);
    if (own && !FoldedAway(instruction)) {
      g.materialised = true;
      g.bytes = std::max(g.bytes, leaf_[i].bytes);
      g.writers.push_back(static_cast<int>(i));
    }
    if (h == Holding::kParameter && instruction->parent() == &entry) g.argument = true;
    if (h == Holding::kConstant) g.constant = true;
  }
  const std::vector<const Shape*> aliased = AliasedOutputs(module_);
  for (int leaf : LeavesOf(entry.root())) {
    Group& g = groups[Find(leaf)];
    g.output = true;
    g.donated = g.donated || std::find(aliased.begin(), aliased.end(), leaf_[leaf].shape) != aliased.end();
  }
  return groups;
}

// What inlined expansions compute from no operand (ExpansionEarlyBytes),
// alive from the start of their computation to the last expansion that
// reads it. An expansion XLA leaves a call (expansion_calls.h) computes it
// when called, with the rest of its scratch. XLA's CSE merges the equal ones,
// as the model's key says: a Cholesky's mask of one size; a solve's blocks
// of one size and triangle (the identity they start from differs).
void ModuleMemory::AddEarlyExpansionValues(std::vector<HeapBuffer>* lives) {
  // The computation is named by its first step: keys in schedule order.
  using Key = std::tuple<int64_t, HloOpcode, int64_t, std::string>;
  std::map<Key, std::pair<const HloInstruction*, int64_t>> last;
  for (const auto& [step, instruction] : ByStep()) {
    const int64_t bytes = ExpansionEarlyBytes(*instruction);
    if (bytes == 0 || shared_expansions_.count(ExpansionSignature(*instruction))) continue;
    const Key key{FirstStep(instruction->parent()), instruction->opcode(), bytes,
                  instruction->RawAttribute("lower").value_or("")};
    auto [it, inserted] = last.emplace(key, std::make_pair(instruction, step));
    if (!inserted && step > it->second.second) it->second = {instruction, step};
  }
  for (const auto& [key, reader] : last) {
    const int64_t first = std::get<0>(key);
    lives->push_back({{std::get<2>(key), first, reader.second}, HeapBuffer::Kind::kScratch, {reader.first},
                      {nullptr}, {first}});
    if (std::get<1>(key) == HloOpcode::kTriangularSolve) TakeFromScratch(*reader.first, std::get<2>(key), lives);
  }
}

// The last solve that reads the blocks of inverses accumulates into them in
// place (its loop's state): its scratch (ScratchBytes) no longer holds them.
void ModuleMemory::TakeFromScratch(const HloInstruction& solve, int64_t bytes, std::vector<HeapBuffer>* lives) {
  const int64_t step = start_[&solve];
  for (HeapBuffer& buffer : *lives) {
    if (buffer.kind != HeapBuffer::Kind::kScratch || buffer.writers.empty() || buffer.writers[0] != &solve ||
        buffer.life.start != step || buffer.life.end != step || buffer.life.bytes != ScratchBytes(solve)) {
      continue;
    }
    buffer.life.bytes = std::max<int64_t>(0, buffer.life.bytes - bytes);
    return;
  }
}

// The first step of `computation` (of its latest run, for a loop body).
int64_t ModuleMemory::FirstStep(const HloComputation* computation) {
  if (first_step_.empty()) {
    for (const auto& [instruction, step] : start_) {
      auto [it, inserted] = first_step_.emplace(instruction->parent(), step);
      if (!inserted) it->second = std::min(it->second, step);
    }
  }
  auto it = first_step_.find(computation);
  return it == first_step_.end() ? 0 : it->second;
}

// The pointer tables of tuple-shaped results (alive as long as their
// elements) and the scratch of expanded instructions (alive while they run).
void ModuleMemory::AddTablesAndScratch(const HloComputation& entry, std::vector<HeapBuffer>* lives) {
  using Kind = HeapBuffer::Kind;
  for (const auto& [step, instruction] : ByStep()) {
    if (const int64_t scratch = ScratchBytes(*instruction) - TopKSortedInPlaceBytes(*instruction, step)) {
      lives->push_back({{scratch, step, step}, Kind::kScratch, {instruction}, {nullptr}, {step}});
    }
    if (const int64_t state = ExpansionLoopStateElements(*instruction)) {
      // The expansion's loop: its table beside the heap.
      lives->push_back({{state * kPointerBytes, step, step}, Kind::kTupleTable, {instruction}, {nullptr}, {step}});
    }
    for (int operand = 0; operand < 2; ++operand) {  // alive from the operand's step
      const int64_t copy = LayoutCopyOfOperandBytes(*instruction, operand);
      if (copy == 0) continue;
      // The copy of a parameter (or of a view of one) runs at the start.
      const HloInstruction* source = StripViews(*instruction->operand(operand), /*through_elements=*/true);
      auto from = start_.find(source);
      const bool early = from != start_.end() && source->Is(HloOpcode::kParameter);
      const int64_t first = early ? std::min(from->second, step) : step;
      lives->push_back({{copy, first, step}, Kind::kScratch, {instruction}, {nullptr}, {first}});
    }
    for (int64_t bytes : ExpansionSmallValues(*instruction)) {
      lives->push_back({{bytes, step, step}, Kind::kScratch, {instruction}, {nullptr}, {step}});
    }
    auto prologue = prologue_start_.find(instruction);
    if (prologue != prologue_start_.end()) {  // alive from its own step to its reader's
      lives->push_back({{PrologueBytes(*instruction), prologue->second, step}, Kind::kScratch,
                        {instruction}, {nullptr}, {prologue->second}});
    }
    if (instruction->Is(HloOpcode::kConditional)) AddConditionalTables(*instruction, step, lives);
    if (instruction->Is(HloOpcode::kDot)) AddDotOperandCopies(*instruction, step, lives);
    if (!instruction->shape().IsTuple() || instruction == entry.root()) continue;
    const Holding h = HoldingOfCached(instruction);
    if (h == Holding::kParameter || instruction->Is(HloOpcode::kGetTupleElement) ||
        instruction->Is(HloOpcode::kCall) || !HasTable(*instruction, loop_bodies_)) {
      continue;
    }
    int64_t end = instruction->Is(HloOpcode::kWhile) ? end_[instruction] : step;
    int64_t start = step;
    if (instruction->Is(HloOpcode::kWhile) && instruction->operand(0)->Is(HloOpcode::kTuple)) {
      start = std::min(start, start_[instruction->operand(0)]);
    }
    for (int leaf : LeavesOf(instruction)) end = std::max(end, last_use_[leaf]);
    // A loop's table holds only the elements XLA's simplifier leaves.
    const int64_t removed = instruction->Is(HloOpcode::kWhile) ? RemovedLoopElements(*instruction) : 0;
    lives->push_back({{TupleTableBytes(instruction->shape()) - removed * kPointerBytes, start, end},
                      Kind::kTupleTable, {instruction}, {&instruction->shape()}, {step}});
  }
}

// XLA's conditional canonicaliser makes a conditional return a tuple and
// read each operand as a tuple: an array-shaped conditional has a table
// of one pointer, alive as long as its result, and each array operand
// one, built as soon as the operand exists.
void ModuleMemory::AddConditionalTables(const HloInstruction& conditional, int64_t step,
                                        std::vector<HeapBuffer>* lives) {
  using Kind = HeapBuffer::Kind;
  if (conditional.shape().IsArray()) {
    int64_t end = end_[&conditional];
    for (int leaf : LeavesOf(&conditional)) end = std::max(end, last_use_[leaf]);
    lives->push_back({{kPointerBytes, step, end}, Kind::kTupleTable, {&conditional}, {&conditional.shape()}, {step}});
  }
  std::unordered_set<const HloInstruction*> seen;
  for (int i = 1; i < conditional.operand_count(); ++i) {
    const HloInstruction* operand = conditional.operand(i);
    if (!operand->shape().IsArray() || !seen.insert(operand).second) continue;
    lives->push_back({{kPointerBytes, start_[operand], step}, Kind::kTupleTable, {&conditional},
                      {&operand->shape()}, {step}});
  }
  AddOperandCopies(conditional, step, lives);
}

// A conditional whose result is written where one of its operands is (a
// loop's state that the conditional updates) would write over what its
// branch still reads: XLA's copy insertion copies that operand first.
void ModuleMemory::AddOperandCopies(const HloInstruction& conditional, int64_t step, std::vector<HeapBuffer>* lives) {
  std::unordered_set<int> results;
  for (int leaf : LeavesOf(&conditional)) results.insert(Find(leaf));
  std::unordered_set<int> copied;
  for (int i = 1; i < conditional.operand_count(); ++i) {
    const HloInstruction* operand = conditional.operand(i);
    for (int leaf : LeavesOf(operand)) {
      if (!results.count(Find(leaf)) || !copied.insert(Find(leaf)).second || leaf_[leaf].bytes == 0) continue;
      lives->push_back({{leaf_[leaf].bytes, start_[operand], step}, HeapBuffer::Kind::kScratch, {&conditional},
                        {nullptr}, {step}});
    }
  }
}

// XLA places a temporary in the allocation of an entry result that is
// not alive while it is (result_lending.h): it leaves the heap.
// `results`: the results' buffers.
void ModuleMemory::DropLentTemporaries(const std::vector<HeapBuffer>& results, std::vector<HeapBuffer>* temporaries) {
  std::vector<AssignedBuffer> assigned;
  for (const HeapBuffer& result : results) assigned.push_back({result.life, true, PostOrderPosition(result)});
  for (const HeapBuffer& buffer : *temporaries) {
    // Tuple tables have allocations of their own; scratch stands for
    // values the model does not place one by one.
    const bool value = buffer.kind == HeapBuffer::Kind::kValue || buffer.one_value;
    assigned.push_back({value ? buffer.life : BufferLife{}, false, PostOrderPosition(buffer)});
  }
  const std::vector<bool> lent = LentResultAllocations(assigned, ExpansionSteps());
  std::vector<HeapBuffer> kept;
  for (size_t i = 0; i < temporaries->size(); ++i) {
    if (!lent[results.size() + i]) kept.push_back(std::move((*temporaries)[i]));
  }
  *temporaries = std::move(kept);
}

// Where XLA's buffer assigner ranks `buffer` among buffers of one size:
// the first of its writers in the post order of the computations (callers
// before the computations they call). A copy the model adds for a dot's
// operand comes just before the dot, that of operand 0 first.
int64_t ModuleMemory::PostOrderPosition(const HeapBuffer& buffer) {
  if (post_order_.empty()) {
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        post_order_.emplace(instruction, 4 * static_cast<int64_t>(post_order_.size()) + 3);
      }
    }
  }
  int64_t position = INT64_MAX;
  for (const HloInstruction* writer : buffer.writers) {
    auto it = post_order_.find(writer);
    if (it == post_order_.end()) continue;
    int64_t at = it->second;
    if (buffer.one_value && writer->Is(HloOpcode::kDot)) at -= 2;
    position = std::min(position, at);
  }
  return position;
}

// The transposed copies of the operands of the dot `dot` (at `step`)
// that XLA's GEMM needs (dot_operand_copies.h). XLA's breadth-first
// schedule makes a copy as soon as its source is written (where the source
// is then read: TransposedCopyStep), and the copy lives until the dot. A
// producer XLA writes straight into its copies is its own first copy.
void ModuleMemory::AddDotOperandCopies(const HloInstruction& dot, int64_t step, std::vector<HeapBuffer>* lives) {
  for (int i = 0; i < 2 && i < dot.operand_count(); ++i) {
    if (!DotTransposesOperand(dot, i)) continue;
    const HloInstruction* buffer = DotOperandBuffer(dot, i);
    if (FoldedAway(buffer) || !start_.count(buffer)) continue;
    const std::vector<int64_t> order = DotOperandOrder(dot, i);
    if (WrittenTransposed(*buffer)) {
      // The producer is itself the copy in the order its first such read needs.
      const auto reads = TransposedDotReads(*buffer);
      if (!reads.empty() && DotOperandOrder(*reads[0].first, reads[0].second) == order) continue;
    }
    const int64_t first = start_[buffer];
    // One copy per buffer and order: a later read extends the first copy.
    const auto key = std::make_pair(StripViews(*buffer), order);
    auto seen = dot_copies_.find(key);
    if (seen != dot_copies_.end()) {
      (*lives)[seen->second].life.end = std::max((*lives)[seen->second].life.end, step);
      continue;
    }
    dot_copies_[key] = static_cast<int>(lives->size());
    lives->push_back({{buffer->shape().ByteSize(), first, step}, HeapBuffer::Kind::kScratch, {&dot}, {nullptr}, {first},
                      /*one_value=*/true});
  }
}

// `value` without the views over it; a read of a tuple element stays
// unless `through_elements`.
const HloInstruction* ModuleMemory::StripViews(const HloInstruction& value, bool through_elements) {
  const HloInstruction* element = &value;
  while (HoldingOfCached(element) == Holding::kOperand && element->operand_count() == 1 &&
         (through_elements || !element->Is(HloOpcode::kGetTupleElement))) {
    element = element->operand(0);
  }
  return element;
}

// XLA's copy insertion: a loop body writes the new value of an element of
// its state into the element's buffer, so when the old value still has
// readers after that write, XLA first copies the old value (at the start
// of the body, as soon as the state exists) and those readers read the
// copy, alive until the last of them.
void ModuleMemory::AddStateReadCopies(std::vector<HeapBuffer>* lives) {
  for (const HloComputation* body : loop_body_order_) {
    const HloInstruction* root = body->root();
    const HloInstruction* state = body->parameter(0);
    if (!root->Is(HloOpcode::kTuple) || LeafCount(state->shape()) != root->operand_count()) continue;
    const std::vector<int>& elements = LeavesOf(state);
    for (int k = 0; k < root->operand_count(); ++k) {
      const HloInstruction* writer = StripViews(*root->operand(k), /*through_elements=*/true);
      // A conditional that updates an element copies it already (AddOperandCopies).
      if (writer->parent() != body || !start_.count(writer) || !writer->shape().IsArray() ||
          writer->Is(HloOpcode::kConditional) ||
          HoldingOfCached(writer) == Holding::kParameter || Find(LeavesOf(writer)[0]) != Find(elements[k])) {
        continue;
      }
      const int64_t last = LastReadAfter(*writer, *state, k);
      if (last < 0) continue;
      // XLA's liveness ends the old value at the copy, and the element's
      // buffer is free until the new value is written: the copy costs
      // memory only while both values are alive.
      const int64_t first = start_[writer];
      lives->push_back({{leaf_[elements[k]].bytes, first, last}, HeapBuffer::Kind::kScratch, {writer}, {nullptr},
                        {first}, /*one_value=*/true});
    }
  }
}

// The last step at which an instruction that depends on `writer` reads
// element `k` of the body's `state` (whatever the schedule, it runs after
// the new value is written), or -1 when none does.
int64_t ModuleMemory::LastReadAfter(const HloInstruction& writer, const HloInstruction& state, int k) {
  std::unordered_set<const HloInstruction*> after;
  std::vector<const HloInstruction*> pending = {&writer};
  while (!pending.empty()) {
    const HloInstruction* at = pending.back();
    pending.pop_back();
    for (const HloInstruction* user : at->users()) {
      if (after.insert(user).second) pending.push_back(user);
    }
  }
  int64_t last = -1;
  for (const HloInstruction* reader : after) {
    if (!start_.count(reader) || FoldedAway(reader) || HoldingOfCached(reader) != Holding::kOwn) continue;
    std::vector<std::pair<const HloInstruction*, bool>> inputs;
    Inputs(reader, false, &inputs);
    for (const auto& input : inputs) {
      const HloInstruction* value = StripViews(*input.first);
      if (value->Is(HloOpcode::kGetTupleElement) && value->operand(0) == &state &&
          value->IntAttribute("index").value_or(-1) == k) {
        last = std::max(last, start_[reader]);
      }
    }
  }
  return last;
}

// The steps of the instructions XLA expands into a loop or a chain of
// small values that the model counts as scratch at the instruction's step
// (expansions.h: ExpansionLoopStateElements, ExpansionSmallValues)
// rather than placing them one by one: those values may hold any result's
// allocation then, so no temporary alive at such a step takes one.
std::vector<int64_t> ModuleMemory::ExpansionSteps() {
  std::vector<int64_t> steps;
  for (const auto& [instruction, step] : start_) {
    if (ExpansionLoopStateElements(*instruction) > 0 || !ExpansionSmallValues(*instruction).empty()) {
      steps.push_back(step);
    }
  }
  return steps;
}

// The buffer of a group of leaves, its writers in schedule order.
HeapBuffer ModuleMemory::ValueBuffer(const Group& g) {
  std::vector<int> writers = g.writers;
  std::stable_sort(writers.begin(), writers.end(), [this](int a, int b) {
    return start_[leaf_[a].instruction] < start_[leaf_[b].instruction];
  });
  HeapBuffer buffer{{g.bytes, g.start, g.end}, HeapBuffer::Kind::kValue, {}, {}, {}};
  for (int leaf : writers) {
    buffer.writers.push_back(leaf_[leaf].instruction);
    buffer.shapes.push_back(leaf_[leaf].shape);
    buffer.steps.push_back(start_[leaf_[leaf].instruction]);
  }
  return buffer;
}

ModuleBuffers ModuleMemory::Figures(const HloComputation& entry) {
  ModuleBuffers buffers;
  MemoryPrediction& p = buffers.prediction;
  for (const HloInstruction* parameter : entry.parameters()) {
    p.argument_bytes += parameter->shape().ByteSize() + TupleTableBytes(parameter->shape());
  }
  p.output_bytes = entry.root()->shape().ByteSize() + TupleTableBytes(entry.root()->shape());
  p.alias_bytes = AliasedOutputBytes(module_);
  p.constant_bytes =
      KeptLiteralBytes(computations_, [this](const HloInstruction& i) { return FoldedAway(&i); });
  std::vector<HeapBuffer>& temporaries = buffers.temporaries;
  std::vector<HeapBuffer> results;
  for (const auto& [root, g] : Groups(entry)) {
    if (g.IsTemporary() && g.bytes > 0) temporaries.push_back(ValueBuffer(g));
    // A result of its own allocation (not a parameter's, not a literal).
    if (g.output && g.materialised && !g.argument && !g.constant && !g.donated && g.bytes > 0) {
      results.push_back(ValueBuffer(g));
    }
  }
  AddTablesAndScratch(entry, &temporaries);
  AddEarlyExpansionValues(&temporaries);
  AddStateReadCopies(&temporaries);
  for (const BufferLife& copy : loop_copies_) {
    temporaries.push_back({copy, HeapBuffer::Kind::kScratch, {schedule_[copy.start]}, {nullptr}, {copy.start}});
  }
  // In schedule order: the packing breaks ties by this order, which must
  // not depend on where the instructions happen to sit in memory.
  std::stable_sort(temporaries.begin(), temporaries.end(), [](const HeapBuffer& a, const HeapBuffer& b) {
    return std::make_tuple(a.life.start, a.life.end, a.life.bytes, static_cast<int>(a.kind)) <
           std::make_tuple(b.life.start, b.life.end, b.life.bytes, static_cast<int>(b.kind));
  });
  DropLentTemporaries(results, &temporaries);
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
  p.buffers = static_cast<int64_t>(lives.size());
  p.live_bytes = PeakLiveBytes(lives);
  p.temp_bytes = CombinedTempBytes(PackedHeapBytes(heap, kAlignment), tables, kAlignment);
  return buffers;
}

}  // namespace memory_internal
}  // namespace exla
