// Runs passes again until none of them changes the module (XLA's
// HloPassFix): for rewrites that make work for each other, such as reading
// an element of a tuple built in place and reading what a loop leaves
// unchanged from the loop's input.
#ifndef EXLA_PASS_PASS_FIX_H_
#define EXLA_PASS_PASS_FIX_H_

#include <memory>
#include <string>
#include <string_view>

#include "pass/pass.h"
#include "pass/pass_pipeline.h"

namespace exla {

class HloPassFix : public HloPass {
 public:
  // XLA's bound on the rounds, so that two passes that undo each other
  // cannot loop forever.
  static constexpr int kMaxRounds = 25;

  explicit HloPassFix(std::string name) : name_(std::move(name)), pipeline_(name_) {}

  void AddPass(std::unique_ptr<HloPass> pass) { pipeline_.AddPass(std::move(pass)); }
  std::string_view name() const override { return name_; }

  // Runs the passes in order, round after round, until a round changes
  // nothing; returns whether any round changed the module.
  bool Run(HloModule* module) override;

 private:
  std::string name_;
  HloPassPipeline pipeline_;
};

}  // namespace exla

#endif  // EXLA_PASS_PASS_FIX_H_
