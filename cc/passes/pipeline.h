// exla's pipeline: its passes built from exla::Options, by name.
#ifndef EXLA_PASSES_PIPELINE_H_
#define EXLA_PASSES_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "pass/pass.h"
#include "pass/pass_pipeline.h"
#include "passes/options.h"

namespace exla {

// Creates the pass called `name`, configured from the public options (the
// one place where exla::Options becomes pass settings); throws
// std::invalid_argument listing the known passes when there is none.
std::unique_ptr<HloPass> CreatePass(const std::string& name, const Options& options);

// The pipeline `options` asks for: its pass list, or the default pipeline
// (whose clean-ups wait for another pass to change the module). Throws like
// CreatePass for an unknown name.
std::unique_ptr<HloPassPipeline> CreatePipeline(const std::string& name, const Options& options);

}  // namespace exla

#endif  // EXLA_PASSES_PIPELINE_H_
