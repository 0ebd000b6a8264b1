// How many times a while loop runs, when the module says.
//
// The splitter's loops and XLA's own count a counter from a constant up to
// a constant bound; XLA's passes also annotate loops with
// backend_config={"known_trip_count":...}. The cost model charges a loop
// per trip; the memory model follows XLA's while loop simplifier, which
// replaces a loop that runs once by its body (single_trip_loops.h).
#ifndef EXLA_ANALYSIS_LOOP_TRIPS_H_
#define EXLA_ANALYSIS_LOOP_TRIPS_H_

#include <cstdint>

#include "ir/instruction.h"

namespace exla {

// Trips of the while loop `loop`: backend_config's known_trip_count, or a
// counter compared with a constant in its condition (as the splitter's loops
// and XLA's own count), starting from a constant in its initial state.
// Returns -1 when neither can be read.
int64_t TripCount(const HloInstruction& loop);

}  // namespace exla

#endif  // EXLA_ANALYSIS_LOOP_TRIPS_H_
