// The settings of exla's passes and the names of the passes a pipeline may
// run: what the public API (api/exla.h) takes and the pipeline
// (pipeline.h) builds passes from.
#ifndef EXLA_PASSES_OPTIONS_H_
#define EXLA_PASSES_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace exla {

// Options shared by every pass. Sizes are in bytes; 0 means "no limit".
// Each user setting is declared once, in python/exla/options.py (its flags,
// help, default); the binding exposes these fields under the names declared
// there (the sizes are `threshold` and `split_size`) and the Python side
// copies every setting declared `core` into them by name.
struct Options {
  int64_t tensor_size_threshold = 0;  // --xla_tensor_size_threshold
  int64_t tensor_split_size = 0;      // --xla_tensor_split_size
  // Pass names to run, in order. Empty means the default pipeline.
  std::vector<std::string> passes;
  // If non-empty, the module is written to this directory before the first
  // pass and after every pass (NNN-<pass>.hlo).
  std::string dump_dir;
  // Allows rewrites that may change results beyond the program's own
  // rounding (the squared-distance expansion): --exla_fast_math.
  bool fast_math = false;
  // Lets the tensor-splitter accumulate a sum over the split dimension above
  // the threshold when it is smaller than what the loop slices (an M x M
  // Gram matrix from M x N slices). The per-tensor threshold is then no
  // longer a promise, so only the memory-limit search, which judges every
  // plan by XLA's planned peak, turns it on.
  bool large_sums = false;
  // Lets the tensor-splitter split a loop body's running accumulator (a
  // state element the body reads and rewrites slice by slice) by a loop that
  // writes each slice back into the state's own buffer
  // (passes/tensor_splitter/TILING.md). Off until the plan search times it:
  // it changes the plans of the splitter's own loops (their large sums).
  bool in_place_loop_state = false;
  // The limit for tensors inside loop bodies of loop bodies the splitter
  // creates (nested loops: the rows of a tile whose keys the outer loop
  // chunks), below the split size that chose the outer chunk; 0: the split
  // size, as before. Only with in_place_loop_state does a nested loop carry
  // a body's running state (TILING.md). With a tile size the split size may
  // exceed the threshold (the outer chunk: attention's key chunk); it then
  // leaves sums above a tile, which the bodies write in place, uncompensated.
  int64_t tensor_tile_size = 0;
  // The dimension to split each named tensor along first
  // ("computation/instruction" -> dimension), where the splitter would
  // otherwise try the longest first. The plan search (search/plan_search.h)
  // sets it to compare plans over different dimensions; a dimension that
  // cannot carry a loop is refused and the usual order follows. -1
  // (kKeepWhole, passes/tensor_splitter/tensor_splitter.h) keeps the tensor
  // whole: read in slices, never split or recomputed.
  std::map<std::string, int64_t> split_dimensions;
};

// The pass names the default pipeline runs, in order.
std::vector<std::string> DefaultPipeline();

// Every pass name that Options::passes may contain.
std::vector<std::string> AvailablePasses();

// The clean-up passes (dead code, copies): the default pipeline skips them
// until another pass changed the module, and callers treat a module that only
// a clean-up changed as unchanged.
std::vector<std::string> CleanupPasses();

}  // namespace exla

#endif  // EXLA_PASSES_OPTIONS_H_
