#include "api/exla.h"

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"

namespace exla {

std::string OptimizeHloText(const std::string& hlo_text, const Options& options,
                            std::vector<PassRecord>* records) {
  // Build the pipeline first so that an unknown pass name is reported before
  // any parsing work.
  std::unique_ptr<HloPassPipeline> pipeline = CreatePipeline("exla", options);
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  VerifyModuleOrThrow(*module, hlo_text);  // passes may assume a well-formed module
  pipeline->Run(module.get(), options.dump_dir, records);
  return PrintHloModule(*module);
}

std::string RoundTripHloText(const std::string& hlo_text) {
  // Verified like every module exla reads: a round trip is how callers check
  // that exla accepts a module, so it must refuse what the passes would.
  std::unique_ptr<HloModule> module = ParseHloModule(hlo_text);
  VerifyModuleOrThrow(*module, hlo_text);
  return PrintHloModule(*module);
}

}  // namespace exla
