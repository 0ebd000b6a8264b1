// Public C++ entry point of exla: HLO text in, optimised HLO text out.
//
// This is the one header that code outside cc/ (the pybind11 module, the XLA
// HloModulePass adapter in xla_patches/, C++ users) needs. It deliberately
// speaks HLO *text* so that callers do not depend on exla's IR classes.
#ifndef EXLA_API_EXLA_H_
#define EXLA_API_EXLA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pass/pass_record.h"  // PassRecord, SplitLoop, UnsplitTensor
#include "passes/options.h"   // Options and the pass names

namespace exla {

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

// Sizes of a module's tensors, read without running a pass
// (api/module_summary.cc): what a report says about a module before and
// after exla, and what the memory-limit search lists as above a threshold.
// Sizes are what one device holds of a sharded module.
//
// Instruction counts and the largest tensors of a module.
struct ModuleSummary {
  std::string name;
  int64_t instructions = 0;  // in all computations
  int64_t computations = 0;
  int64_t largest_tensor_bytes = 0;  // of every computation
  std::string largest_tensor;        // "computation/instruction shape"
  int64_t entry_largest_tensor_bytes = 0;  // of the entry computation alone
  std::string entry_largest_tensor;
  bool sharded = false;  // annotated for XLA's SPMD partitioner
  int64_t devices = 1;   // the devices it is partitioned over
};

// One array-shaped instruction and its size.
struct TensorSize {
  std::string computation;
  std::string instruction;
  std::string opcode;
  int64_t bytes = 0;  // what one device holds of it
  std::string shape;  // as XLA prints it, without layout
  // A leaf of the entry's result (its root, or an element of a root tuple),
  // or what such a leaf is a view of (a reshape, a bitcast, a transpose that
  // moves no dimension): its buffer is one of the program's outputs, which a
  // memory limit counts with the outputs, not as a temporary.
  bool output = false;
};

// Parses and verifies `hlo_text` (a summary of a malformed module would
// mislead). Throws std::invalid_argument on malformed text.
ModuleSummary SummarizeModule(const std::string& hlo_text);

// Every array-shaped instruction of `hlo_text`, computation by computation.
// Throws std::invalid_argument on malformed text.
std::vector<TensorSize> TensorSizes(const std::string& hlo_text);

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
