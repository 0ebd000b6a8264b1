// Where XLA writes a value into the buffer of one it reads.
//
// XLA writes a dynamic-update-slice or a scatter into the buffer it
// updates, an elementwise loop over the buffer of an operand that dies
// there, and a sort over the arrays it sorts when they die there, unless
// something pins the operand's buffer (a parameter, a literal, the entry's
// result, a running loop's state) or the writer is a call XLA outlined for
// threads (except into the entry's result). Such a value and its operand
// are then one buffer.
#ifndef EXLA_MODEL_BUFFERS_IN_PLACE_H_
#define EXLA_MODEL_BUFFERS_IN_PLACE_H_

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "ir/module.h"
#include "model/buffers/leaf_buffers.h"
#include "model/buffers/module_schedule.h"
#include "model/fusion/fused_module.h"

namespace exla {

class InPlaceSharing {
 public:
  // `last_use`: each leaf's last reader's step (live_ranges.h).
  InPlaceSharing(const HloModule& module, const ModuleSchedule& schedule, FusedModule* fusion, LeafBuffers* leaves,
                 const std::vector<int64_t>& last_use)
      : module_(module), schedule_(schedule), fusion_(fusion), leaves_(leaves), last_use_(last_use) {}

  // Unites each value written in place with the buffer it writes over, in
  // schedule order.
  void Run();

  // The bytes of the operand of the top-k `topk` (at `step`) that XLA's
  // expansion sorts in place rather than in a copy (expansions.h's
  // ScratchBytes), or 0.
  int64_t TopKSortedInPlaceBytes(const HloInstruction& topk, int64_t step);

 private:
  // Per buffer (union-find root): its last reader's step, and whether it
  // may not be written over (a parameter, a literal or an entry result).
  void IndexGroups();
  void Merge(int a, int b);

  // XLA sorts in place: the sort (leaves of, at `step`) writes each sorted
  // array over the operand it sorts when it is that operand's only reader
  // and the operand dies there (an iota of indices, a copy of the keys),
  // unless a call XLA outlines for threads writes the operand or the
  // sorted array is a result of the entry.
  void ShareSortedOperands(const HloInstruction& sort, int64_t step);

  // Unites `instruction` (at `step`) with the first operand it may write
  // over (a dynamic-update-slice's or scatter's buffer, or an elementwise
  // operand of its loop that dies there): whether it did. Not an operand
  // XLA outlined for threads, unless into the entry's result: the call only
  // passes on a value its outlined loop defines, and XLA's heap simulator
  // (heap_simulator.cc, RunComputation) lets a value take the buffer of an
  // operand's value only when the instruction that defines that value is
  // one the reader reads. The result's allocation, assigned before the heap,
  // checks the call instead (see ChainOutlinedLoopsIntoResult).
  bool WriteOverDyingOperand(const HloInstruction& instruction, int64_t step);

  // XLA's buffer assignment places a value in the allocation of the
  // entry's result when its live range interferes with none of the values
  // already there. It decides that on the schedule's order, where a use at
  // a call comes before every value defined inside the called computation,
  // and a loop's elementwise use of an operand comes before its own
  // result. So a loop outlined for threads that writes the result's
  // allocation (directly or through the next loop, which writes it in
  // place) takes the operand that dies there into it too, and a chain of
  // outlined loops ending in the result shares one allocation. The heap of
  // temporaries has no such rule (there the call holds its operands while
  // the loop writes), so only chains into the result. The first pass cannot
  // see a chain (it runs forward, before the later loops joined the
  // result); this one runs backward from the result.
  void ChainOutlinedLoopsIntoResult();

  // Whether XLA may sort `operand` in place (if it dies at the sort).
  bool SortableInPlace(const HloInstruction& operand);

  // Whether the elementwise loop `instruction` (leaf `mine`, at `step`) may
  // write its result over an operand that dies there. Not when it writes a
  // running loop's state (a body's update of an accumulator): that buffer is
  // alive all through the loop, so the operand keeps a buffer of its own.
  // Not when XLA outlines it for threads, unless the operand can take the
  // entry's result buffer, which XLA assigns before any temporary.
  bool MayWriteOverOperands(const HloInstruction& instruction, int mine, int64_t step);

  // Whether the buffer of `leaf` is a temporary whose last reader runs at
  // `step`. A loop's state is one only after the loop has returned, and
  // then only for the entry's result, which XLA assigns first (it writes
  // the result over the state the loop leaves).
  bool Dies(int leaf, int64_t step, bool into_result);

  // Whether `operand` (a loop's state) is read as what the loop returns (an
  // element of the loop's result). XLA lets a user take an operand's buffer
  // only when it reads the value at the value's last position
  // (buffer_assignment.cc, LiveRangeInterferes: can_share_as_operand). A
  // state element the loop passes through unchanged is read after the loop
  // as its initial value (XLA's simplifier forwards it), whose last position
  // is the loop's state, not that reader: the reader writes a buffer of its
  // own, and the value stays alive in the heap beside it.
  bool ReadsLoopResult(const HloInstruction& operand);

  const HloModule& module_;
  const ModuleSchedule& schedule_;
  FusedModule* fusion_;
  LeafBuffers* leaves_;
  const std::vector<int64_t>& last_use_;
  // Per buffer (union-find root):
  std::vector<int64_t> group_last_;        // its last reader's step
  std::vector<bool> group_pinned_;         // not to be written over
  std::vector<int64_t> group_loop_start_;  // the step a loop holding it as state starts
  std::vector<int64_t> group_loop_end_;    // ... and the step it returns (-1: no loop's state)
  std::vector<bool> group_state_;          // a computation's parameter, not the entry's
  std::vector<bool> group_result_;         // the entry's result
  // The instructions the first pass wrote over an operand.
  std::unordered_set<const HloInstruction*> written_in_place_;
};

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_IN_PLACE_H_
