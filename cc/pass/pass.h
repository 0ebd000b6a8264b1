// The pass interface: a named transformation of an HloModule.
#ifndef EXLA_PASS_PASS_H_
#define EXLA_PASS_PASS_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "pass/pass_record.h"

namespace exla {

class HloPass {
 public:
  virtual ~HloPass() = default;
  // The name used in pass lists, dumps and reports (e.g. "dce").
  virtual std::string_view name() const = 0;
  // Runs the pass; returns true iff the module changed. A pass takes its
  // settings (thresholds, sizes) in its constructor, so that it can be built
  // and tested on its own; the pipeline builds passes from exla::Options.
  virtual bool Run(HloModule* module) = 0;
  // Clean-up passes (dce, ...) only tidy what other passes left behind. The
  // default pipeline skips them until a pass has changed the module, so a
  // program exla has nothing to do for comes out exactly as it went in.
  virtual bool IsCleanup() const { return false; }

  // What the last run did, for reports: log lines (what was left alone and
  // why) and, for passes that have them, results as data. The pipeline
  // fills in the name, whether it changed anything and the time.
  PassRecord TakeRecord() { return std::move(record_); }

 protected:
  void Log(std::string message) { record_.messages.push_back(std::move(message)); }
  // The record of the current run, for a pass's typed results.
  PassRecord& record() { return record_; }

 private:
  PassRecord record_;
};

}  // namespace exla

#endif  // EXLA_PASS_PASS_H_
