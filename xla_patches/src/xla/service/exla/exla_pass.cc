#include "xla/service/exla/exla_pass.h"

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/log/log.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/exla.h"  // exla's public C++ API (@exla//:exla_core)
#include "xla/hlo/ir/hlo_computation.h"
#include "xla/hlo/ir/hlo_input_output_alias_config.h"
#include "xla/hlo/ir/hlo_instruction.h"
#include "xla/hlo/ir/hlo_module.h"
#include "xla/hlo/ir/hlo_print_options.h"
#include "xla/hlo/parser/hlo_parser.h"
#include "xla/service/computation_layout.h"
#include "xla/service/exla/exla_size.h"
#include "xla/shape.h"
#include "xla/shape_util.h"
#include "xla/tsl/platform/errors.h"
#include "xla/tsl/platform/statusor.h"
#include "xla/xla.pb.h"

namespace xla {
namespace {

// What exla is given: the parseable short form (full constants, operand names
// without shapes), plus the metadata and control dependencies that a pass in
// the middle of a compiler must carry through.
HloPrintOptions PrintOptionsForExla() {
  return HloPrintOptions::ShortParsable()
      .set_print_metadata(true)
      .set_print_control_dependencies(true);
}

absl::StatusOr<int64_t> SizeFromField(absl::string_view flag,
                                      const std::string& value) {
  if (value.empty()) return int64_t{0};
  std::optional<int64_t> bytes = ParseExlaSize(value);
  if (!bytes.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", value, " is not a size: expected ", kExlaSizeSyntax));
  }
  return *bytes;
}

bool CompatibleSignatures(const ProgramShape& a, const ProgramShape& b) {
  if (a.parameters_size() != b.parameters_size()) return false;
  for (int i = 0; i < a.parameters_size(); ++i) {
    if (!ShapeUtil::Compatible(a.parameters(i), b.parameters(i))) return false;
  }
  return ShapeUtil::Compatible(a.result(), b.result());
}

}  // namespace

bool ExlaPass::IsEnabled(const DebugOptions& debug_options) {
  const std::string& threshold = debug_options.xla_tensor_size_threshold();
  if (threshold.empty()) return false;
  std::optional<int64_t> bytes = ParseExlaSize(threshold);
  return !bytes.has_value() || *bytes > 0;
}

absl::StatusOr<ExlaPass::Config> ExlaPass::ConfigFromDebugOptions(
    const DebugOptions& debug_options) {
  Config config;
  TF_ASSIGN_OR_RETURN(config.tensor_size_threshold,
                      SizeFromField("xla_tensor_size_threshold",
                                    debug_options.xla_tensor_size_threshold()));
  TF_ASSIGN_OR_RETURN(config.tensor_split_size,
                      SizeFromField("xla_tensor_split_size",
                                    debug_options.xla_tensor_split_size()));
  return config;
}

absl::Status ExlaPass::ReplaceComputations(HloModule* module,
                                           HloModule* source) {
  if (module->entry_computation() == nullptr ||
      source->entry_computation() == nullptr) {
    return absl::InvalidArgumentError("exla: module without an entry");
  }
  const ProgramShape old_signature =
      module->entry_computation()->ComputeProgramShape();
  const ProgramShape new_signature =
      source->entry_computation()->ComputeProgramShape();
  if (!CompatibleSignatures(old_signature, new_signature)) {
    return absl::FailedPreconditionError(
        absl::StrCat("exla changed the entry signature from ",
                     old_signature.ToString(), " to ",
                     new_signature.ToString()));
  }

  // Adding an entry computation resets these; they describe the module's
  // interface, which exla keeps, so they are restored afterwards.
  const ComputationLayout entry_layout = module->entry_computation_layout();
  HloInputOutputAliasConfig aliasing = module->input_output_alias_config();
  HloBufferDonorConfig donors = module->buffer_donor_config();

  // The parsed entry becomes the module's entry; every old computation is
  // then unreachable from it and is removed.
  module->MoveComputationsFrom(source);
  TF_RETURN_IF_ERROR(module->RemoveUnusedComputations());

  *module->mutable_entry_computation_layout() = entry_layout;
  module->set_input_output_alias_config(std::move(aliasing));
  module->set_buffer_donor_config(std::move(donors));
  return absl::OkStatus();
}

absl::StatusOr<bool> ExlaPass::RunImpl(
    HloModule* module,
    const absl::flat_hash_set<absl::string_view>& execution_threads) {
  // exla rewrites whole modules, so it runs with the main thread only.
  if (!execution_threads.empty() &&
      !execution_threads.contains(HloInstruction::kMainExecutionThread)) {
    return false;
  }
  Config config;
  if (fixed_config_.has_value()) {
    config = *fixed_config_;
  } else {
    TF_ASSIGN_OR_RETURN(config,
                        ConfigFromDebugOptions(module->config().debug_options()));
  }
  if (module->has_schedule()) {
    LOG(WARNING) << "exla: module " << module->name()
                 << " is already scheduled; exla runs before scheduling, "
                    "leaving it unchanged";
    return false;
  }

  ::exla::Options options;
  options.tensor_size_threshold = config.tensor_size_threshold;
  options.tensor_split_size = config.tensor_split_size;
  options.passes = config.passes;

  const std::string before = module->ToString(PrintOptionsForExla());
  std::vector<::exla::PassRecord> records;
  std::string after;
  try {
    after = ::exla::OptimizeHloText(before, options, &records);
  } catch (const std::exception& e) {
    // exla must never be the reason a working program stops compiling.
    LOG(WARNING) << "exla: leaving module " << module->name()
                 << " unchanged: " << e.what();
    return false;
  }

  bool changed = false;
  for (const ::exla::PassRecord& record : records) {
    changed = changed || record.changed;
    VLOG(1) << "exla: " << record.name << (record.changed ? " changed" : "")
            << " " << module->name() << " in " << record.seconds << " s";
    for (const std::string& message : record.messages) {
      VLOG(2) << "exla: " << record.name << ": " << message;
    }
  }
  if (!changed || after == before) return false;

  absl::StatusOr<std::unique_ptr<HloModule>> parsed =
      ParseAndReturnUnverifiedModule(after, module->config());
  if (!parsed.ok()) {
    LOG(WARNING) << "exla: XLA cannot parse exla's result for module "
                 << module->name() << ", leaving it unchanged: "
                 << parsed.status();
    return false;
  }
  const ProgramShape old_signature =
      module->entry_computation()->ComputeProgramShape();
  const ProgramShape new_signature =
      (*parsed)->entry_computation()->ComputeProgramShape();
  if (!CompatibleSignatures(old_signature, new_signature)) {
    LOG(WARNING) << "exla: leaving module " << module->name()
                 << " unchanged: exla changed its entry signature from "
                 << old_signature.ToString() << " to "
                 << new_signature.ToString();
    return false;
  }
  TF_RETURN_IF_ERROR(ReplaceComputations(module, parsed->get()));
  return true;
}

}  // namespace xla
