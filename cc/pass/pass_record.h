// What a pass reports: its log lines and, for the tensor splitter, its
// results as data. Declared below every pass (pass.h returns it) and read by
// the layers above them (the plan search, the public API, the bindings).
#ifndef EXLA_PASS_PASS_RECORD_H_
#define EXLA_PASS_PASS_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace exla {

// A loop the tensor-splitter built: what it split, how, and what it
// computes a second time. The splitter's note for the user is printed from
// this record; callers that need the figures read them here, never from the
// note's text.
struct SplitLoop {
  std::string computation;  // where the split tensor is
  std::string instruction;  // the tensor the loop was built from
  std::string shape;        // its shape, as XLA prints it (no layout)
  int64_t bytes = 0;        // its size (the largest array of a tuple)
  std::vector<int64_t> extents;  // that array's dimensions, in order
  int64_t dimension = 0;    // the dimension the loop runs over
  int64_t extent = 0;       // that dimension's size
  int64_t chunk = 0;        // the slice of it each trip takes
  int64_t chunks = 0;       // trips of `chunk` (extent / chunk)
  int64_t remainder = 0;    // the last, shorter slice (0: none)
  int64_t members = 0;      // instructions moved into the loop
  std::vector<std::string> recomputed;  // producers the loop computes again
  int64_t recomputed_flops = 0;         // and their work
  // Sums weighted by a softmax that the loop of its statistics accumulates
  // in the same pass (passes/tensor_splitter/weighted_sums.h), by name.
  std::vector<std::string> accumulated;
};

// An instruction above the threshold that the tensor-splitter left whole,
// with the reason of every dimension it tried.
struct UnsplitTensor {
  std::string computation;
  std::string instruction;
  std::string shape;
  int64_t bytes = 0;  // what one device holds of it
  bool per_device = false;  // `bytes` is one device's share of a sharded value
  std::string reason;
};

// What one pass did.
struct PassRecord {
  std::string name;
  bool changed = false;
  double seconds = 0.0;
  // What the pass left alone and why (e.g. an instruction it cannot split),
  // one line each; the tensor-splitter's lines are printed from the records
  // below.
  std::vector<std::string> messages;
  // The tensor-splitter's results as data (empty for the other passes).
  std::vector<SplitLoop> loops;
  std::vector<UnsplitTensor> unsplit;
  int64_t recomputed_flops = 0;  // the loops' repeated work, all together
  int64_t program_flops = 0;     // the program's own work, for scale
  // Members added to every region the splitter grew, built or abandoned: its
  // search work, which tests hold to linear growth in the program's size
  // (wall time would be a flaky measure of the same).
  int64_t region_members = 0;
};

}  // namespace exla

#endif  // EXLA_PASS_PASS_RECORD_H_
