// A cost model: the time XLA's CPU backend takes to run a module, predicted
// from the arithmetic it does and the bytes it moves, so that the memory-limit
// search can rank plans that all fit by how fast they run.
//
// The unit of work is what XLA CPU runs as one kernel: an instruction that
// gets a buffer of its own (buffer_model.h) together with the producers
// fusion folds into it. A kernel takes the longer of its arithmetic (dots at
// GEMM speed, transcendental functions at their own rate, other elementwise
// work at another) and its memory traffic (the buffers it reads, in full or
// the slice it takes, plus what it writes), a roofline, plus a fixed launch
// overhead. A thin matrix product (few rows, columns or a shallow
// contraction) runs below the GEMM's full rate, by a power of each thin
// side calibrated on this machine. Sorts and top-k selections are costed by the comparisons they
// make and the elements they read, at rates of their own (flops.h): XLA CPU
// calls a comparator per comparison, so a sort is slow beside arithmetic.
// An update in place (dynamic-update-slice) also pays for the elements of
// the rows it crosses outside its block, at a rate of its own: XLA CPU
// tests each of them, so a loop writing column blocks is much slower than
// one writing row blocks. A while loop costs its body and condition once per
// trip plus a trip overhead; a plan that re-reads a whole weight on every
// trip therefore pays for every re-read, and one that recomputes a producer
// pays for it on every trip.
//
// The last-level cache is modelled by reuse distance: a buffer read or
// written in full is still cached while fewer bytes than the cache holds
// have been moved since, and is then read (or rewritten) at the cache's
// bandwidth. A loop is costed as its first trip plus the others like its
// second, so a weight smaller than the cache re-read every trip costs
// memory bandwidth once, and a trip whose working set fits in the cache
// streams its temporaries at cache speed. Slices never count as touching a
// buffer in full, so a loop slicing a large operand reads it from memory.
#ifndef EXLA_MODEL_COST_COST_MODEL_H_
#define EXLA_MODEL_COST_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/cost/cost_constants.h"
#include "analysis/loop_trips.h"  // TripCount
#include "ir/module.h"

namespace exla {

// One while loop of the module: its figures for one execution of the loop
// (all its trips; a loop nested in another is counted again on every trip
// of the outer loop in the totals, once here).
struct LoopCost {
  std::string computation;  // where the while instruction is
  std::string instruction;  // the while instruction
  int64_t trips = 1;        // trip count (1 when it cannot be read)
  bool trips_known = false; // read from the condition or known_trip_count
  int64_t flops = 0;
  int64_t bytes = 0;
  double seconds = 0.0;
};

// The prediction for a module; totals count every trip of every loop.
struct TimePrediction {
  int64_t flops = 0;            // all arithmetic (InstructionFlops)
  int64_t dot_flops = 0;        // of which in dots, convolutions, factorisations
  int64_t transcendentals = 0;  // results of exp, log, tanh...
  int64_t bytes = 0;            // read and written by the kernels
  int64_t kernels = 0;          // kernels launched
  int64_t trips = 0;            // while loop trips
  double seconds = 0.0;         // the predicted time
  std::vector<LoopCost> loops;  // in the order of the module's text
};

// Predicts how long XLA CPU takes to run `module` once, with `constants`
// (calibrated on this machine: model/cost/cost_constants.h).
TimePrediction PredictTime(const HloModule& module, const CostConstants& constants = {});

}  // namespace exla

#endif  // EXLA_MODEL_COST_COST_MODEL_H_
