// How many times a while loop runs, when the module says.
//
// The splitter's loops and XLA's own count a counter from a constant up to
// a constant bound; XLA's passes also annotate loops with
// backend_config={"known_trip_count":...}. The cost model charges a loop
// per trip; the memory model follows XLA's while loop simplifier, which
// replaces a loop that runs once by its body.
#ifndef EXLA_ANALYSIS_LOOP_TRIPS_H_
#define EXLA_ANALYSIS_LOOP_TRIPS_H_

#include <cstdint>

#include "ir/module.h"

namespace exla {

// Trips of the while loop `loop`: backend_config's known_trip_count, or a
// counter compared with a constant in its condition (as the splitter's loops
// and XLA's own count), starting from a constant in its initial state.
// Returns -1 when neither can be read.
int64_t TripCount(const HloInstruction& loop);

// Whether some computation of `module` has a while loop that runs once.
bool HasSingleTripLoops(const HloModule& module);

// Replaces, in place, every while loop that runs once by a call of its body
// on its initial state, as XLA's while loop simplifier does (XLA's call
// inliner, like the model's, then inlines the call): no state table, no
// counter or condition, and the body's values scheduled with the caller's.
void CallBodiesOfSingleTripLoops(HloModule* module);

}  // namespace exla

#endif  // EXLA_ANALYSIS_LOOP_TRIPS_H_
