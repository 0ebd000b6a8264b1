#include "model/fusion/fused_module.h"

#include <unordered_set>
#include <vector>

#include "analysis/flops.h"
#include "ir/computation.h"
#include "model/fusion/fusion_duplication.h"
#include "model/fusion/reader_duplication.h"

namespace exla {

Holding FusedModule::HoldingOf(const HloInstruction* instruction) {
  auto it = holding_.find(instruction);
  if (it != holding_.end()) return it->second;
  Holding h = exla::HoldingOf(*instruction);
  if (h == Holding::kFused) {
    auto limited = over_duplicated_.find(instruction->parent());
    if (limited == over_duplicated_.end()) {
      limited = over_duplicated_.emplace(instruction->parent(), OverDuplicatedProducers(*instruction->parent())).first;
    }
    if (limited->second.count(instruction)) h = Holding::kOwn;
    if (IsExpensive(*instruction) && ReadByACopiedReader(*instruction)) h = Holding::kOwn;
  }
  return holding_[instruction] = h;
}

// XLA fuses a cheap value into each loop that can take it and writes it
// for the readers that cannot (reader_duplication.h). An expensive value
// in that value's loop then has two readers, the copy and the written
// value: XLA fuses an expensive producer into none of them where that
// would compute it twice, so it writes it once (InstructionFusion's
// duplication check). The loop is found through the users the producer
// is fused into.
bool FusedModule::ReadByACopiedReader(const HloInstruction& producer) {
  std::vector<const HloInstruction*> pending(producer.users().begin(), producer.users().end());
  std::unordered_set<const HloInstruction*> seen;
  while (!pending.empty()) {
    const HloInstruction* user = pending.back();
    pending.pop_back();
    if (!seen.insert(user).second) continue;
    const Holding holding = HoldingOf(user);
    if (holding == Holding::kFused) {
      pending.insert(pending.end(), user->users().begin(), user->users().end());
      continue;
    }
    if (holding != Holding::kOwn) continue;
    for (const HloInstruction* reader : user->users()) {
      if (DuplicatedIntoReader(*user, *reader)) return true;
    }
  }
  return false;
}

bool FusedModule::FoldedAway(const HloInstruction* instruction) {
  const Holding h = HoldingOf(instruction);
  if (h == Holding::kFused) return true;
  if (h == Holding::kOperand && instruction->operand_count() == 1 &&
      !instruction->Is(HloOpcode::kGetTupleElement) && !instruction->Is(HloOpcode::kTuple)) {
    return FoldedAway(instruction->operand(0));
  }
  return false;
}

bool FusedModule::ReadsThrough(const HloInstruction* operand, const HloInstruction* reader) {
  return FoldedAway(operand) ||
         (HoldingOf(&ViewedProducer(*operand)) == Holding::kOwn && DuplicatedIntoReader(*operand, *reader));
}

void FusedModule::Inputs(const HloInstruction* reader, bool elementwise,
                         std::vector<std::pair<const HloInstruction*, bool>>* inputs) {
  for (const HloInstruction* operand : reader->operands()) {
    if (!FoldedAway(operand) && &ViewedProducer(*operand) != operand && ReadsThrough(operand, reader)) {
      // A copy of the producer of a reshaped view: the loop reads the
      // producer's operands, through the reshape (never in place).
      Inputs(&ViewedProducer(*operand), false, inputs);
    } else if (ReadsThrough(operand, reader)) {
      // A reshape to the shape it already has is no reshape (XLA's
      // simplifier removes it): the path stays elementwise.
      const bool identity = operand->Is(HloOpcode::kReshape) && operand->shape().IsArray() &&
                            operand->operand(0)->shape().IsArray() &&
                            operand->shape().dims() == operand->operand(0)->shape().dims();
      Inputs(operand, elementwise && (operand->IsElementwise() || identity), inputs);
    } else {
      inputs->push_back({operand, elementwise && !ReshapedView(*operand)});
    }
  }
}

bool FusedModule::ReshapedView(const HloInstruction& view) {
  for (const HloInstruction* at = &view; HoldingOf(at) == Holding::kOperand && at->operand_count() == 1;
       at = at->operand(0)) {
    const bool reshape = at->Is(HloOpcode::kReshape) || at->Is(HloOpcode::kBitcast);
    if (reshape && at->shape().IsArray() && at->operand(0)->shape().IsArray() &&
        at->shape().dims() != at->operand(0)->shape().dims()) {
      return true;
    }
  }
  return false;
}

bool FusedModule::Outlined(const HloInstruction& instruction) {
  auto known = outlined_.find(&instruction);
  if (known != outlined_.end()) return known->second;
  return outlined_[&instruction] = ComputeOutlined(instruction);
}

bool FusedModule::ComputeOutlined(const HloInstruction& instruction) {
  if (parallel_computations_.empty()) parallel_computations_ = ParallelTaskComputations(module_);
  if (!parallel_computations_.count(instruction.parent())) return false;
  LoopWork work;
  work.bytes = instruction.shape().ByteSize();
  std::vector<std::pair<const HloInstruction*, bool>> inputs;
  Inputs(&instruction, true, &inputs);
  // XLA's fusion takes each distinct operand once (one fused parameter,
  // however many of its instructions read it), and its cost analysis counts
  // the bytes of the fusion's operands: a value read on several paths of
  // the loop (a select of x and of 0.5 * x where x > t) is read once.
  std::unordered_set<const HloInstruction*> counted;
  for (const auto& input : inputs) {
    if (input.first->shape().IsArray() && counted.insert(input.first).second) {
      work.bytes += input.first->shape().ByteSize();
    }
  }
  std::unordered_set<const HloInstruction*> fused;
  CountLoopOps(instruction, &work, &fused);
  return OutlinedForParallelTasks(instruction, work);
}

// XLA's cost analysis (HloCostAnalysis::HandleReduce) counts the
// reducer's arithmetic once for each element folded into the result. Not
// analysis/flops.h's InstructionFlops, the roofline's one per input
// element: the threshold being mirrored is XLA's, in XLA's units.
void FusedModule::CountReducerOps(const HloInstruction& reduce, LoopWork* work) {
  const int64_t folded = reduce.operand(0)->shape().ElementCount() - reduce.shape().ElementCount();
  for (const HloComputation* reducer : reduce.called_computations()) {
    for (const auto& owned : reducer->instructions()) {
      if (!owned->IsElementwise()) continue;
      (IsTranscendental(*owned) ? work->transcendentals : work->flops) += folded;
    }
  }
}

void FusedModule::CountLoopOps(const HloInstruction& instruction, LoopWork* work,
                               std::unordered_set<const HloInstruction*>* fused) {
  if (!fused->insert(&instruction).second) return;
  if (instruction.IsElementwise()) {
    const int64_t elements = instruction.shape().ElementCount();
    (IsTranscendental(instruction) ? work->transcendentals : work->flops) += elements;
  } else if (instruction.Is(HloOpcode::kReduce) && instruction.shape().IsArray()) {
    CountReducerOps(instruction, work);
  }
  // A producer copied into this loop (one XLA duplicates into each of its
  // readers) is computed here too: its arithmetic counts, as in the cost
  // analysis of XLA's fusion.
  for (const HloInstruction* operand : instruction.operands()) {
    if (FoldedAway(operand)) {
      CountLoopOps(*operand, work, fused);
    } else if (ReadsThrough(operand, &instruction)) {
      CountLoopOps(ViewedProducer(*operand), work, fused);
    }
  }
}

const HloInstruction* FusedModule::StripViews(const HloInstruction& value, bool through_elements) {
  const HloInstruction* element = &value;
  while (HoldingOf(element) == Holding::kOperand && element->operand_count() == 1 &&
         (through_elements || !element->Is(HloOpcode::kGetTupleElement))) {
    element = element->operand(0);
  }
  return element;
}

}  // namespace exla
