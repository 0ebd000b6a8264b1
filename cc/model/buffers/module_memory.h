// The builder behind PredictBuffers (memory_model.h), shared by the two
// files that define it: memory_model.cc (the schedule, aliasing, lives and
// in-place sharing) and module_figures.cc (the figures of buffer
// assignment: which buffers are temporaries, the tables and scratch beside
// them, the heap they pack into). Internal to the memory model.
#ifndef EXLA_MODEL_BUFFERS_MODULE_MEMORY_H_
#define EXLA_MODEL_BUFFERS_MODULE_MEMORY_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/fusion/instruction_fusion.h"
#include "model/buffers/memory_model.h"
#include "model/fusion/parallel_tasks.h"
#include "ir/module.h"

namespace exla {
namespace memory_internal {

// XLA's CPU backend aligns every buffer of its heap to 64 bytes.
constexpr int64_t kAlignment = 64;

// One array (or token) that an instruction defines: a leaf of its shape.
struct Leaf {
  const HloInstruction* instruction = nullptr;
  const Shape* shape = nullptr;
  int64_t bytes = 0;
};

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

// Builds the buffers of a module, their lives on XLA's schedule and the
// figures of buffer assignment.
class ModuleMemory {
 public:
  // `shared_expansions`: the expansions XLA leaves calls (expansion_calls.h),
  // counted before the model's simplifications merge any.
  ModuleMemory(const HloModule& module, bool later_readers_first, std::set<std::string> shared_expansions = {})
      : module_(module), later_readers_first_(later_readers_first), shared_expansions_(std::move(shared_expansions)) {}

  ModuleBuffers Predict();

 private:
  // --- leaves and union-find -------------------------------------------
  const std::vector<int>& LeavesOf(const HloInstruction* instruction);

  int Find(int leaf);

  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

  // Leaves [first, first + count) of `instruction` alias all of `other`'s.
  void UnionRange(const HloInstruction* instruction, int64_t first, const HloInstruction* other);

  // HoldingOf, less the producers XLA leaves out of loops that would
  // compute them too often (fusion_duplication.h).
  Holding HoldingOfCached(const HloInstruction* instruction);

  // --- the schedule ------------------------------------------------------
  // Gives every instruction of `computation` (and of the computations its
  // control flow runs, at the point where it runs them) a step.
  void Walk(const HloComputation& computation);

  // --- aliasing ----------------------------------------------------------
  void AliasViewsAndControlFlow();

  // A while loop's state is one set of buffers, shared by its result, the
  // parameters of its body and condition and the body's result. Its initial
  // value is written into it in place when the loop is its last reader or
  // the body only reads it; otherwise XLA copies it in first.
  void AliasWhile(const HloInstruction& loop);

  // A called computation reads its operands where they are and writes its
  // result where the caller's result is.
  void AliasCalls(const HloInstruction& instruction);

  // --- lives -------------------------------------------------------------
  // Whether `instruction` computes nothing of its own at its step: fusion
  // folds it into its readers, or it is a view of such a value.
  bool FoldedAway(const HloInstruction* instruction);

  // The buffers `reader` reads at its step, looking through what fusion
  // folds into it; `elementwise` says whether the path from each is
  // elementwise (so that the reader may write over it).
  void Inputs(const HloInstruction* reader, bool elementwise,
              std::vector<std::pair<const HloInstruction*, bool>>* inputs);

  // Whether `view` is its buffer seen through a reshape that changes its
  // dimensions (which a loop reading it is not elementwise in).
  bool ReshapedView(const HloInstruction& view);

  // Each instruction with its step, in schedule order.
  std::vector<std::pair<int64_t, const HloInstruction*>> ByStep() const;

  void Use(const HloInstruction* instruction, int64_t step);

  // The step at which `reader` (at `at`) reads `input`: earlier when it
  // reads a transposed copy, made as soon as `input` is written.
  int64_t TransposedCopyStep(const HloInstruction& reader, const HloInstruction& input, int64_t at);

  void RecordUses();

  // XLA writes a dynamic-update-slice into the buffer it updates, and an
  // elementwise loop over the buffer of an operand that dies there.
  void ShareInPlace();

  // XLA sorts in place: the sort (leaves of, at `step`) writes each sorted
  // array over the operand it sorts when it is that operand's only reader
  // and the operand dies there (an iota of indices, a copy of the keys),
  // unless a call XLA outlines for threads writes the operand or the
  // sorted array is a result of the entry.
  void ShareSortedOperands(const HloInstruction& sort, int64_t step);

  // Whether XLA may sort `operand` in place (if it dies at the sort).
  bool SortableInPlace(const HloInstruction& operand);

  // The bytes of the operand of the top-k `topk` (at `step`) that XLA's
  // expansion sorts in place rather than in a copy (ScratchBytes), or 0.
  int64_t TopKSortedInPlaceBytes(const HloInstruction& topk, int64_t step);

  // Whether the elementwise loop `instruction` (leaf `mine`, at `step`) may
  // write its result over an operand that dies there. Not when it writes a
  // running loop's state (a body's update of an accumulator): that buffer is
  // alive all through the loop, so the operand keeps a buffer of its own.
  // Not when XLA outlines it for threads, unless the operand can take the
  // entry's result buffer, which XLA assigns before any temporary.
  bool MayWriteOverOperands(const HloInstruction& instruction, int mine, int64_t step);

  // Whether XLA's parallel task assigner moves `instruction` into a call of
  // its own, which then cannot write over the operands the call holds.
  bool Outlined(const HloInstruction& instruction);

  // The elementwise operations of the loop `instruction` runs, with the
  // producers fusion folds into it.
  void CountLoopOps(const HloInstruction& instruction, LoopCost* cost);

  // Per buffer (union-find root): its last reader's step, and whether it
  // may not be written over (a parameter, a literal or an entry result).
  void IndexGroups();

  void Merge(int a, int b);

  // Whether the buffer of `leaf` is a temporary whose last reader runs at
  // `step`. A loop's state is one only after the loop has returned, and
  // then only for the entry's result, which XLA assigns first (it writes
  // the result over the state the loop leaves).
  bool Dies(int leaf, int64_t step, bool into_result);

  // --- figures -------------------------------------------------------------
  std::unordered_map<int, Group> Groups(const HloComputation& entry);

  // The pointer tables of tuple-shaped results (alive as long as their
  // elements) and the scratch of expanded instructions (alive while they run).
  void AddTablesAndScratch(const HloComputation& entry, std::vector<HeapBuffer>* lives);
  void AddEarlyExpansionValues(std::vector<HeapBuffer>* lives);
  void TakeFromScratch(const HloInstruction& solve, int64_t bytes, std::vector<HeapBuffer>* lives);
  int64_t FirstStep(const HloComputation* computation);

  // XLA's conditional canonicaliser makes a conditional return a tuple and
  // read each operand as a tuple: an array-shaped conditional has a table
  // of one pointer, alive as long as its result, and each array operand
  // one, built as soon as the operand exists.
  void AddConditionalTables(const HloInstruction& conditional, int64_t step, std::vector<HeapBuffer>* lives);

  // A conditional whose result is written where one of its operands is (a
  // loop's state that the conditional updates) would write over what its
  // branch still reads: XLA's copy insertion copies that operand first.
  void AddOperandCopies(const HloInstruction& conditional, int64_t step, std::vector<HeapBuffer>* lives);

  // XLA places a temporary in the allocation of an entry result that is
  // not alive while it is (result_lending.h): it leaves the heap.
  void DropLentTemporaries(const std::vector<HeapBuffer>& results, std::vector<HeapBuffer>* temporaries);

  // Where XLA's buffer assigner ranks `buffer` among buffers of one size
  // (the post order of its first writer).
  int64_t PostOrderPosition(const HeapBuffer& buffer);

  // The transposed copies XLA makes of the operands of the dot `dot`
  // (at `step`) for its GEMM (dot_operand_copies.h).
  void AddDotOperandCopies(const HloInstruction& dot, int64_t step, std::vector<HeapBuffer>* lives);

  // The steps of the instructions XLA expands into loops or chains of
  // values the model counts as scratch: any result's allocation may be
  // held then.
  std::vector<int64_t> ExpansionSteps();

  // XLA's copy insertion copies the old value of an element of a loop's
  // state that is still read after the body writes the new one.
  void AddStateReadCopies(std::vector<HeapBuffer>* lives);

  // The last step at which an instruction that depends on `writer` reads
  // element `k` of the loop body's `state`, or -1.
  int64_t LastReadAfter(const HloInstruction& writer, const HloInstruction& state, int k);

  // `value` without the views over it; a read of a tuple element stays
  // unless `through_elements`.
  const HloInstruction* StripViews(const HloInstruction& value, bool through_elements = false);

  // The buffer of a group of leaves, its writers in schedule order.
  HeapBuffer ValueBuffer(const Group& g);

  ModuleBuffers Figures(const HloComputation& entry);

  const HloModule& module_;
  const bool later_readers_first_;
  std::vector<const HloComputation*> computations_;
  std::unordered_map<const HloInstruction*, std::vector<int>> leaves_;
  std::unordered_map<const HloInstruction*, Holding> holding_;
  std::unordered_map<const HloComputation*, std::unordered_set<const HloInstruction*>> over_duplicated_;
  std::unordered_map<const HloInstruction*, int64_t> start_, end_;
  std::unordered_map<const HloInstruction*, int64_t> prologue_start_;
  std::unordered_map<const HloComputation*, int64_t> first_step_;
  std::set<std::string> shared_expansions_;
  // The copies XLA's copy insertion makes of the elements a loop body
  // returns in another element's place.
  std::vector<BufferLife> loop_copies_;
  // The transposed copies of dot operands made so far, by buffer and
  // order of dimensions: the index of the copy's life.
  std::map<std::pair<const HloInstruction*, std::vector<int64_t>>, int> dot_copies_;
  std::unordered_map<int, int64_t> copied_from_;  // loop state leaf -> step its initial value is copied
  std::unordered_set<const HloComputation*> loop_bodies_;
  std::vector<const HloComputation*> loop_body_order_;  // loop_bodies_, in the order aliased
  std::vector<const HloInstruction*> schedule_;  // the instruction of each step
  std::unordered_map<const HloInstruction*, int64_t> post_order_;  // see PostOrderPosition
  std::vector<Leaf> leaf_;
  std::vector<int> parent_;
  std::vector<int64_t> last_use_;
  std::vector<int64_t> group_last_;
  std::vector<bool> group_pinned_;
  std::vector<int64_t> group_loop_start_;  // per buffer: the step a loop holding it as state starts
  std::vector<int64_t> group_loop_end_;    // ... and the step it returns (-1: no loop's state)
  std::vector<bool> group_state_;          // per buffer: a computation's parameter, not the entry's
  std::vector<bool> group_result_;         // per buffer: the entry's result
  std::unordered_set<const HloComputation*> parallel_computations_;
  int64_t clock_ = 0;
};

}  // namespace memory_internal
}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_MODULE_MEMORY_H_
