// Public C++ entry point of exla: HLO text in, optimised HLO text out.
//
// This is the one header that code outside cc/ (the pybind11 module, the XLA
// HloModulePass adapter in xla_patches/, C++ users) needs. It deliberately
// speaks HLO *text* so that callers do not depend on exla's IR classes.
#ifndef EXLA_API_EXLA_H_
#define EXLA_API_EXLA_H_

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
  // The dimension to split each named tensor along first
  // ("computation/instruction" -> dimension), where the splitter would
  // otherwise try the longest first. The plan search (search/plan_search.h)
  // sets it to compare plans over different dimensions; a dimension that
  // cannot carry a loop is refused and the usual order follows. -1
  // (kKeepWhole, passes/tensor_splitter/tensor_splitter.h) keeps the tensor
  // whole: read in slices, never split or recomputed.
  std::map<std::string, int64_t> split_dimensions;
};

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

// The pass names the default pipeline runs, in order.
std::vector<std::string> DefaultPipeline();

// Every pass name that Options::passes may contain.
std::vector<std::string> AvailablePasses();

// The clean-up passes (dead code, copies): the default pipeline skips them
// until another pass changed the module, and callers treat a module that only
// a clean-up changed as unchanged.
std::vector<std::string> CleanupPasses();

// One array of an entry signature (cc/api/signature.cc).
struct SignatureArray {
  std::string element_type;   // XLA's name: "f32", "pred", "token", ...
  std::vector<int64_t> dims;  // empty for a scalar or a token
  bool is_array = true;       // false for a token, or a tuple parameter
  bool is_dynamic = false;    // a dimension is dynamic (`<=N` or `?`)
};

// One entry of the header's input_output_alias: output `output_index` is
// written in place of parameter `parameter` (at `parameter_index` in it).
struct SignatureAlias {
  std::vector<int64_t> output_index;     // {} for a non-tuple result
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;  // {} for the whole parameter
};

// The calling convention of a module's entry computation.
struct HloSignature {
  std::vector<SignatureArray> parameters;  // one per parameter, by number
  std::vector<SignatureArray> outputs;     // leaves of the result, in order
  bool output_is_tuple = false;
  std::vector<SignatureAlias> aliases;
};

// Parses `hlo_text` and reads its entry signature. Throws
// std::invalid_argument on malformed text (with line:column), including a
// malformed input_output_alias.
HloSignature ReadHloSignature(const std::string& hlo_text);

// Parses `hlo_text`, runs the pipeline and returns the printed module.
// Throws std::invalid_argument (with line:column) on malformed text or an
// unknown pass name. If `records` is non-null it receives one entry per pass.
std::string OptimizeHloText(const std::string& hlo_text, const Options& options,
                            std::vector<PassRecord>* records);

// parse(text) then print: the identity on every module XLA prints, up to
// whitespace. Used by the round-trip tests.
std::string RoundTripHloText(const std::string& hlo_text);

}  // namespace exla

#endif  // EXLA_API_EXLA_H_
