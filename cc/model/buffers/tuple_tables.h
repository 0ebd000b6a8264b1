// The pointer tables of tuple-shaped values.
//
// XLA CPU holds a tuple as a table of pointers to its elements' buffers (8
// bytes an element), a buffer of its own in the heap. Not every tuple of
// the module as written gets one: XLA's simplifier reads the elements of a
// tuple directly where only element reads use it, and drops a tuple that
// rebuilds another one element by element; a loop's state table is one
// buffer, shared by its initial tuple, the loop and its body's result.
// XLA's conditional canonicaliser, on the other hand, adds tables: a
// conditional returns a tuple and reads its operands as tuples.
#ifndef EXLA_MODEL_BUFFERS_TUPLE_TABLES_H_
#define EXLA_MODEL_BUFFERS_TUPLE_TABLES_H_

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "model/buffers/buffer_analyses.h"
#include "model/buffers/memory_model.h"

namespace exla {

// A tuple's buffer is a table of pointers to its elements' buffers.
inline constexpr int64_t kPointerBytes = 8;

// Bytes of the pointer tables of a tuple shape, nested tuples included.
int64_t TupleTableBytes(const Shape& shape);

// Whether the tuple-shaped `instruction` (not a parameter, an element read
// or the entry's result) has a table of its own. `loop_bodies` are the
// bodies of the module's loops: the table of a body's result is the loop's.
bool HasTable(const HloInstruction& instruction, const std::unordered_set<const HloComputation*>& loop_bodies);

// Adds the table of the tuple-shaped `instruction` (at `step`), alive as
// long as its elements, when it has one (HasTable): a loop's table from
// its initial tuple to its end, holding only the elements XLA's simplifier
// leaves (simplify/loop_simplifier.h).
void AddTupleTable(const BufferAnalyses& analyses, const HloInstruction& instruction, int64_t step,
                   std::vector<HeapBuffer>* lives);

// XLA's conditional canonicaliser makes a conditional return a tuple and
// read each operand as a tuple: adds, for an array-shaped `conditional` (at
// `step`), a table of one pointer, alive as long as its result, and for each
// array operand one, built as soon as the operand exists.
void AddConditionalTables(const BufferAnalyses& analyses, const HloInstruction& conditional, int64_t step,
                          std::vector<HeapBuffer>* lives);

}  // namespace exla

#endif  // EXLA_MODEL_BUFFERS_TUPLE_TABLES_H_
