// exla integration for XLA: an HloModulePass that runs exla's passes
// (algebraic rewrites, dot reordering, tensor splitting) on an HloModule.
//
// exla speaks HLO text, so the pass prints the module, runs
// exla::OptimizeHloText on the text, parses the result with XLA's own parser
// and moves the parsed computations into the module in place of the old ones.
// Module-level state (name, config, entry computation layout, input/output
// aliasing, buffer donors, frontend attributes, stack frames) is kept.
//
// The compilers add this pass only when ExlaPass::IsEnabled() says so, i.e.
// when --xla_tensor_size_threshold is set to a non-zero size.

#ifndef XLA_SERVICE_EXLA_EXLA_PASS_H_
#define XLA_SERVICE_EXLA_EXLA_PASS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "xla/hlo/ir/hlo_module.h"
#include "xla/hlo/pass/hlo_pass_interface.h"
#include "xla/xla.pb.h"

namespace xla {

class ExlaPass : public HloModulePass {
 public:
  struct Config {
    // Bytes; 0 means no limit (exla's splitter then leaves tensors alone).
    int64_t tensor_size_threshold = 0;
    // Bytes; 0 lets exla choose the slice size.
    int64_t tensor_split_size = 0;
    // exla pass names to run, in order; empty means exla's default pipeline.
    std::vector<std::string> passes;
  };

  // Reads the sizes from the module's DebugOptions
  // (xla_tensor_size_threshold, xla_tensor_split_size) on every run.
  ExlaPass() = default;
  // Uses `config` regardless of the module's DebugOptions (for tests and for
  // callers that build their own pipelines).
  explicit ExlaPass(Config config) : fixed_config_(std::move(config)) {}

  absl::string_view name() const override { return "exla"; }

  // True when `debug_options` asks for exla: xla_tensor_size_threshold is
  // non-empty and not a size of zero. (A malformed value also counts, so that
  // the pass reports it instead of silently doing nothing.)
  static bool IsEnabled(const DebugOptions& debug_options);

  // The sizes `debug_options` asks for, or InvalidArgument naming the field
  // and the accepted forms.
  static absl::StatusOr<Config> ConfigFromDebugOptions(
      const DebugOptions& debug_options);

  // Moves every computation of `source` into `module` in place of the
  // module's own computations, keeping the module's entry computation
  // layout, input/output aliasing and buffer donors. Fails, leaving `module`
  // untouched, when the entry computations' signatures are incompatible.
  static absl::Status ReplaceComputations(HloModule* module,
                                          HloModule* source);

 protected:
  absl::StatusOr<bool> RunImpl(
      HloModule* module,
      const absl::flat_hash_set<absl::string_view>& execution_threads)
      override;

 private:
  std::optional<Config> fixed_config_;
};

}  // namespace xla

#endif  // XLA_SERVICE_EXLA_EXLA_PASS_H_
