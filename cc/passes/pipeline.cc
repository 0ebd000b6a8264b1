#include "passes/pipeline.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <sys/stat.h>

#include "ir/printer.h"
#include "passes/algebraic_rewriter.h"
#include "pass/dce.h"
#include "passes/dot_order_optimizer.h"
#include "passes/remove_copies.h"
#include "passes/tensor_splitter/tensor_splitter.h"

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
                                                 o.large_sums, o.split_dimensions);
       }},
      {"remove-copies", [](const Options&) { return std::make_unique<RemoveCopies>(); }},
      {"dce", [](const Options&) { return std::make_unique<DeadCodeElimination>(); }},
  };
  return registry;
}

void MakeDirectories(const std::string& path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!partial.empty()) ::mkdir(partial.c_str(), 0755);
    }
    if (i < path.size()) partial.push_back(path[i]);
  }
}

void Dump(const HloModule& module, const std::string& dir, int index, const std::string& label) {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%03d-", index);
  std::string path = dir + "/" + prefix + label + ".hlo";
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write dump file " + path);
  out << PrintHloModule(module);
}

}  // namespace

std::vector<std::string> AvailablePasses() {
  std::vector<std::string> names;
  for (const PassFactory& factory : Registry()) names.emplace_back(factory.name);
  return names;
}

std::vector<std::string> DefaultPipeline() { return AvailablePasses(); }

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

bool HloPassPipeline::Run(HloModule* module, const std::string& dump_dir,
                          std::vector<PassRecord>* records) {
  bool dump = !dump_dir.empty();
  if (dump) {
    MakeDirectories(dump_dir);
    Dump(*module, dump_dir, 0, "input");
  }
  bool changed = false;
  int index = 0;
  for (const auto& pass : passes_) {
    if (skip_cleanups_until_change_ && !changed && pass->IsCleanup()) continue;
    auto start = std::chrono::steady_clock::now();
    bool pass_changed = pass->Run(module);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    changed |= pass_changed;
    if (records != nullptr) {
      PassRecord record = pass->TakeRecord();
      record.name = std::string(pass->name());
      record.changed = pass_changed;
      record.seconds = seconds;
      records->push_back(std::move(record));
    }
    if (dump) Dump(*module, dump_dir, ++index, std::string(pass->name()));
  }
  return changed;
}

}  // namespace exla
