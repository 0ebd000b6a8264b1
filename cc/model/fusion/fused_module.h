// One module as XLA's fusion leaves it, as the buffer stage reads it.
//
// instruction_fusion.h judges each instruction on its own; this view of a
// whole module adds what depends on the others: producers a fused loop
// would compute too often stay out of it (fusion_duplication.h), what a
// loop reads is found through the values folded into it, and XLA's
// parallel task assigner outlines large loops (parallel_tasks.h). Answers
// are cached: the buffer stage asks about each instruction many times.
#ifndef EXLA_MODEL_FUSION_FUSED_MODULE_H_
#define EXLA_MODEL_FUSION_FUSED_MODULE_H_

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "model/fusion/instruction_fusion.h"
#include "model/fusion/parallel_tasks.h"

namespace exla {

class FusedModule {
 public:
  explicit FusedModule(const HloModule& module) : module_(module) {}

  // How XLA CPU holds the value `instruction` defines (instruction_fusion.h),
  // less the producers it leaves out of loops that would compute them too
  // often (fusion_duplication.h).
  Holding HoldingOf(const HloInstruction* instruction);

  // Whether `instruction` computes nothing of its own at its step: fusion
  // folds it into its readers, or it is a view of such a value.
  bool FoldedAway(const HloInstruction* instruction);

  // Whether `reader` computes `operand` in its own loop rather than read a
  // buffer of it: fusion folds `operand` away, or copies it into this reader
  // (reader_duplication.h).
  bool ReadsThrough(const HloInstruction* operand, const HloInstruction* reader);

  // The buffers `reader` reads at its step, looking through what fusion
  // folds into it; `elementwise` says whether the path from each is
  // elementwise (so that the reader may write over it).
  void Inputs(const HloInstruction* reader, bool elementwise,
              std::vector<std::pair<const HloInstruction*, bool>>* inputs);

  // Whether `view` is its buffer seen through a reshape that changes its
  // dimensions. XLA fuses that reshape (a bitcast once layouts are
  // assigned) into the loop that reads it, and a loop that reads an operand
  // through a bitcast is not elementwise in it: it never writes over it.
  bool ReshapedView(const HloInstruction& view);

  // `value` without the views over it; a read of a tuple element stays
  // unless `through_elements`.
  const HloInstruction* StripViews(const HloInstruction& value, bool through_elements = false);

  // Whether XLA's parallel task assigner moves `instruction` into a call of
  // its own, which then cannot write over the operands the call holds.
  bool Outlined(const HloInstruction& instruction);

 private:
  bool ComputeOutlined(const HloInstruction& instruction);
  // The elementwise operations of the loop `instruction` runs, with the
  // producers fusion folds into it, each once (`fused`: those counted). A
  // fused computation holds one instruction per producer however many
  // paths of the loop read it, and XLA's cost analysis counts the flops of
  // each instruction of it once.
  void CountLoopOps(const HloInstruction& instruction, LoopWork* work,
                    std::unordered_set<const HloInstruction*>* fused);
  static void CountReducerOps(const HloInstruction& reduce, LoopWork* work);
  bool ReadByACopiedReader(const HloInstruction& producer);

  const HloModule& module_;
  std::unordered_map<const HloInstruction*, Holding> holding_;
  std::unordered_map<const HloComputation*, std::unordered_set<const HloInstruction*>> over_duplicated_;
  std::unordered_set<const HloComputation*> parallel_computations_;
  // Outlined's answers: each walks every path into the loop, which on a
  // deep chain of reused values is slow to repeat.
  std::unordered_map<const HloInstruction*, bool> outlined_;
};

}  // namespace exla

#endif  // EXLA_MODEL_FUSION_FUSED_MODULE_H_
