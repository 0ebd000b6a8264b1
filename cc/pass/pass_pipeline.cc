#include "pass/pass_pipeline.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>

#include "ir/printer.h"

namespace exla {
namespace {

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
