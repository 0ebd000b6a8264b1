#include "model/buffers/scratch.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "ir/computation.h"
#include "model/buffers/tuple_tables.h"
#include "model/expand/convolution_layout.h"
#include "model/expand/expansions.h"
#include "model/expand/loop_state_layout.h"
#include "model/expand/tree_reduction.h"
#include "model/simplify/expansion_calls.h"

namespace exla {
namespace {

using Kind = HeapBuffer::Kind;

// The copies of a convolution's operands in another layout, each alive
// from its operand's step: the copy of a parameter (or of a view of one)
// runs at the start.
void AddLayoutCopies(const BufferAnalyses& a, const HloInstruction& instruction, int64_t step,
                     std::vector<HeapBuffer>* lives) {
  for (int operand = 0; operand < 2; ++operand) {
    const int64_t copy = LayoutCopyOfOperandBytes(instruction, operand);
    if (copy == 0) continue;
    const HloInstruction* source = a.fusion.StripViews(*instruction.operand(operand), /*through_elements=*/true);
    auto from = a.schedule.start.find(source);
    const bool early = from != a.schedule.start.end() && source->Is(HloOpcode::kParameter);
    const int64_t first = early ? std::min(from->second, step) : step;
    lives->push_back({{copy, first, step}, Kind::kScratch, {&instruction}, {nullptr}, {first}});
  }
}

// The last expansion that reads early values uses them in place (the last
// solve accumulates its inverses into them, a blocked Cholesky's loops
// start from its zero factors): its scratch (ScratchBytes) no longer holds
// them.
void TakeFromScratch(const ModuleSchedule& schedule, const HloInstruction& reader, int64_t bytes,
                     std::vector<HeapBuffer>* lives) {
  const int64_t step = schedule.Start(&reader);
  for (HeapBuffer& buffer : *lives) {
    if (buffer.kind != Kind::kScratch || buffer.writers.empty() || buffer.writers[0] != &reader ||
        buffer.life.start != step || buffer.life.end != step || buffer.life.bytes != ScratchBytes(reader)) {
      continue;
    }
    buffer.life.bytes = std::max<int64_t>(0, buffer.life.bytes - bytes);
    return;
  }
}

}  // namespace

void AddExpansionBuffers(const BufferAnalyses& a, const HloInstruction& instruction, int64_t step,
                         std::vector<HeapBuffer>* lives) {
  if (const int64_t scratch = ScratchBytes(instruction) - a.in_place.TopKSortedInPlaceBytes(instruction, step)) {
    lives->push_back({{scratch, step, step}, Kind::kScratch, {&instruction}, {nullptr}, {step}});
  }
  if (const int64_t state = ExpansionLoopStateElements(instruction)) {
    // The expansion's loop: its table beside the heap.
    lives->push_back({{state * kPointerBytes, step, step}, Kind::kTupleTable, {&instruction}, {nullptr}, {step}});
  }
  AddLayoutCopies(a, instruction, step, lives);
  if (const int64_t copy = TreeReductionLayoutCopyBytes(instruction)) {  // beside the input it transposes
    lives->push_back({{copy, step, step}, Kind::kScratch, {&instruction}, {nullptr}, {step}, /*one_value=*/true});
  }
  if (const int64_t copy = LoopStateLayoutCopyBytes(instruction)) {  // beside the transposed value it copies
    lives->push_back({{copy, step, step}, Kind::kScratch, {&instruction}, {nullptr}, {step}, /*one_value=*/true});
  }
  auto copy = a.schedule.result_copy_start.find(&instruction);
  if (copy != a.schedule.result_copy_start.end()) {  // the temporary, alive until its copy into the result
    lives->push_back({{instruction.shape().ByteSize(), step, copy->second}, Kind::kScratch, {&instruction},
                      {nullptr}, {step}, /*one_value=*/true});
  }
  for (int64_t bytes : ExpansionSmallValues(instruction)) {
    lives->push_back({{bytes, step, step}, Kind::kScratch, {&instruction}, {nullptr}, {step}});
  }
  auto prologue = a.schedule.prologue_start.find(&instruction);
  if (prologue != a.schedule.prologue_start.end()) {  // alive from its own step to its reader's
    lives->push_back({{PrologueBytes(instruction), prologue->second, step}, Kind::kScratch, {&instruction},
                      {nullptr}, {prologue->second}});
  }
}

void AddEarlyExpansionValues(const BufferAnalyses& a, std::vector<HeapBuffer>* lives) {
  // The computation is named by its first step: keys in schedule order.
  using Key = std::tuple<int64_t, HloOpcode, int64_t, std::string>;
  std::map<Key, std::pair<const HloInstruction*, int64_t>> last;
  for (const auto& [step, instruction] : a.schedule.ByStep()) {
    const int64_t bytes = ExpansionEarlyBytes(*instruction);
    if (bytes == 0 || a.shared_expansions.count(ExpansionSignature(*instruction))) continue;
    const Key key{a.schedule.FirstStep(instruction->parent()), instruction->opcode(), bytes,
                  instruction->RawAttribute("lower").value_or("")};
    auto [it, inserted] = last.emplace(key, std::make_pair(instruction, step));
    if (!inserted && step > it->second.second) it->second = {instruction, step};
  }
  for (const auto& [key, reader] : last) {
    const int64_t first = std::get<0>(key);
    lives->push_back({{std::get<2>(key), first, reader.second}, Kind::kScratch, {reader.first}, {nullptr}, {first}});
    if (const int64_t in_scratch = ExpansionEarlyBytesInScratch(*reader.first)) {
      TakeFromScratch(a.schedule, *reader.first, in_scratch, lives);
    }
  }
}

std::vector<int64_t> ExpansionSteps(const ModuleSchedule& schedule) {
  std::vector<int64_t> steps;
  for (const auto& [step, instruction] : schedule.ByStep()) {
    if (ExpansionLoopStateElements(*instruction) > 0 || !ExpansionSmallValues(*instruction).empty()) {
      steps.push_back(step);
    }
  }
  return steps;
}

}  // namespace exla
