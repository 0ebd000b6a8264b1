// What a split costs: the note the tensor splitter leaves for each loop it
// builds (what was split, how, and which producers the loop computes a second
// time), its flops counted by analysis/flops.h.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_COST_H_
#define EXLA_PASSES_TENSOR_SPLITTER_COST_H_

#include <cstdint>
#include <string>

#include "analysis/flops.h"
#include "pass/pass_record.h"
#include "ir/instruction.h"
#include "passes/tensor_splitter/region.h"

namespace exla {

// What one loop of the splitter does, read from the region before it is
// rewritten. `anchor` is the instruction the region was built from and `dim`
// its dimension that the loop runs over, in chunks of `chunk`. A member that
// keeps users outside the region stays where it is and the loop computes it
// again, slice by slice: that is the recomputed work.
SplitLoop DescribeSplit(const SplitRegion& region, const HloInstruction& anchor, int64_t dim,
                        int64_t chunk);

// Drops from `loop` the producers that the program no longer computes once
// the loop replaced their users (the dead code removed): a softmax's
// exponentials, whose sum and weighted sums the loop of its statistics
// computes in one pass, are then computed once, in the loop, not twice.
void KeepRecomputedThatStayed(SplitLoop* loop, const HloComputation& computation);

// The note for the user about one loop, one line, printed from its record:
// "split " and its description (what was split, how, what is recomputed).
std::string SplitNoteText(const SplitLoop& loop);
std::string SplitDescription(const SplitLoop& loop);

// The note about an instruction left whole, printed from its record, and
// the size as it states it ("4.0 MB", "1.0 MB per device").
std::string UnsplitNoteText(const UnsplitTensor& tensor);
std::string UnsplitSizeText(const UnsplitTensor& tensor);

// The note about the work all loops of a pass repeat.
std::string RecomputationNoteText(int64_t recomputed_flops, int64_t program_flops);

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_COST_H_
