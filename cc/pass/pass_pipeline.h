// Runs passes in order, optionally dumping the module after each one (XLA's
// HloPassPipeline).
#ifndef EXLA_PASS_PASS_PIPELINE_H_
#define EXLA_PASS_PASS_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "pass/pass.h"
#include "pass/pass_record.h"

namespace exla {

class HloPassPipeline {
 public:
  explicit HloPassPipeline(std::string name) : name_(std::move(name)) {}

  void AddPass(std::unique_ptr<HloPass> pass) { passes_.push_back(std::move(pass)); }
  int pass_count() const { return static_cast<int>(passes_.size()); }

  // Runs every pass once, in order. Returns true if any pass changed the
  // module. With `dump_dir` non-empty, writes `000-input.hlo` and then
  // `NNN-<pass>.hlo` after each pass.
  bool Run(HloModule* module, const std::string& dump_dir, std::vector<PassRecord>* records);

  // See HloPass::IsCleanup(). Off by default: explicitly requested passes
  // always run.
  void set_skip_cleanups_until_change(bool skip) { skip_cleanups_until_change_ = skip; }

 private:
  std::string name_;
  bool skip_cleanups_until_change_ = false;
  std::vector<std::unique_ptr<HloPass>> passes_;
};

}  // namespace exla

#endif  // EXLA_PASS_PASS_PIPELINE_H_
