// The copies XLA makes of values, beside the values: its copy insertion's,
// where one buffer would otherwise be written while another value in it is
// still read, and the transposed copies its GEMM reads.
#ifndef EXLA_MODEL_BUFFERS_COPIES_H_
#define EXLA_MODEL_BUFFERS_COPIES_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/buffers/buffer_analyses.h"
#include "model/buffers/memory_model.h"

namespace exla {

// A conditional whose result is written where one of its operands is (a
// loop's state that the conditional updates) would write over what its
// branch still reads: XLA's copy insertion copies that operand first. Adds
// those copies of `conditional` (at `step`).
void AddConditionalOperandCopies(const BufferAnalyses& analyses, const HloInstruction& conditional, int64_t step,
                                 std::vector<HeapBuffer>* lives);

// XLA's copy insertion: a loop body writes the new value of an element of
// its state into the element's buffer, so when the old value still has
// readers after that write, XLA first copies the old value (at the start
// of the body, as soon as the state exists) and those readers read the
// copy, alive until the last of them. Adds those copies.
void AddStateReadCopies(const BufferAnalyses& analyses, std::vector<HeapBuffer>* lives);

// Adds the copies of the elements loop bodies return in another element's
// place (aliasing.h), one buffer each at the body's end.
void AddRotatedCopies(const BufferAnalyses& analyses, std::vector<HeapBuffer>* lives);

// The transposed copies of dot operands XLA's GEMM needs
// (fusion/dot_operand_copies.h), one per buffer and order of dimensions.
class DotOperandCopies {
 public:
  // Adds the copies the dot `dot` (at `step`) reads. XLA's breadth-first
  // schedule makes a copy as soon as its source is written (where the
  // source is then read: live_ranges.h), and the copy lives until the dot;
  // a later read of the same copy extends it. A producer XLA writes
  // straight into its copies is its own first copy.
  void Add(const BufferAnalyses& analyses, const HloInstruction& dot, int64_t step, std::vector<HeapBuffer>* lives);

 private:
  // By buffer and order of dimensions: the index of the copy's life.
  std::map<std::pair<const HloInstruction*, std::vector<int64_t>>, int> copies_;
};

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_COPIES_H_
