#include "passes/pipeline.h"

#include <functional>
#include <stdexcept>

#include "pass/dce.h"
#include "passes/algebraic_rewriter.h"
#include "passes/dot_order_optimizer.h"
#include "passes/remove_copies.h"
#include "passes/tensor_splitter/tensor_splitter.h"
#include "passes/topk_prefilter.h"

namespace exla {
namespace {

struct PassFactory {
  const char* name;
  std::function<std::unique_ptr<HloPass>(const Options&)> create;
};

// Every pass exla knows, in default pipeline order.
const std::vector<PassFactory>& Registry() {
  static const std::vector<PassFactory> registry = {
      // Smaller equivalent programs first, so that the splitter starts from
      // the smallest intermediates.
      {"algebraic-rewriter",
       [](const Options& o) {
         return std::make_unique<AlgebraicRewriter>(o.tensor_size_threshold, o.fast_math);
       }},
      {"dot-order-optimizer", [](const Options&) { return std::make_unique<DotOrderOptimizer>(); }},
      {"tensor-splitter",
       [](const Options& o) {
         return std::make_unique<TensorSplitter>(o.tensor_size_threshold, o.tensor_split_size,
                                                 o.large_sums, o.split_dimensions,
                                                 o.in_place_loop_state, o.tensor_tile_size);
       }},
      // After the splitter: it prefilters the top-ks the splitter's loops
      // compute on chunks as well as whole ones.
      {"topk-prefilter", [](const Options&) { return std::make_unique<TopKPrefilter>(); }},
      {"remove-copies", [](const Options&) { return std::make_unique<RemoveCopies>(); }},
      {"dce", [](const Options&) { return std::make_unique<DeadCodeElimination>(); }},
  };
  return registry;
}

}  // namespace

std::vector<std::string> AvailablePasses() {
  std::vector<std::string> names;
  for (const PassFactory& factory : Registry()) names.emplace_back(factory.name);
  return names;
}

std::vector<std::string> DefaultPipeline() { return AvailablePasses(); }

std::vector<std::string> CleanupPasses() {
  std::vector<std::string> names;
  for (const std::string& name : AvailablePasses()) {
    if (CreatePass(name, Options{})->IsCleanup()) names.push_back(name);
  }
  return names;
}

std::unique_ptr<HloPass> CreatePass(const std::string& name, const Options& options) {
  for (const PassFactory& factory : Registry()) {
    if (name == factory.name) return factory.create(options);
  }
  std::string known;
  for (const std::string& n : AvailablePasses()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown pass '" + name + "'; available passes: " + known);
}

std::unique_ptr<HloPassPipeline> CreatePipeline(const std::string& name, const Options& options) {
  auto pipeline = std::make_unique<HloPassPipeline>(name);
  const std::vector<std::string> names =
      options.passes.empty() ? DefaultPipeline() : options.passes;
  for (const std::string& pass : names) pipeline->AddPass(CreatePass(pass, options));
  pipeline->set_skip_cleanups_until_change(options.passes.empty());
  return pipeline;
}

}  // namespace exla
