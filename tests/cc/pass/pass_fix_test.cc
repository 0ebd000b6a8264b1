// HloPassFix (cc/pass/pass_fix.h): passes run round after round until a
// round changes nothing.
#include <memory>
#include <string_view>

#include "ir/module.h"
#include "pass/pass_fix.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloModule;
using exla::HloPass;
using exla::HloPassFix;

// Says it changed the module on its first `changes` runs; counts its runs.
class CountingPass : public HloPass {
 public:
  CountingPass(int changes, int* runs) : changes_(changes), runs_(runs) {}
  std::string_view name() const override { return "counting"; }
  bool Run(HloModule*) override { return ++*runs_ <= changes_; }

 private:
  int changes_;
  int* runs_;
};

TEST(HloPassFix, RunsUntilARoundChangesNothing) {
  int first = 0, second = 0;
  HloPassFix fix("fix");
  fix.AddPass(std::make_unique<CountingPass>(3, &first));
  fix.AddPass(std::make_unique<CountingPass>(0, &second));
  HloModule module("m");
  EXPECT_TRUE(fix.Run(&module));
  // Three rounds changed something; the fourth changed nothing.
  EXPECT_EQ(first, 4);
  EXPECT_EQ(second, 4);
}

// Runs a fix of one pass that changes the module `changes` times; returns
// whether the fix changed it and sets `runs` to the pass's runs.
bool RunFixOfOne(int changes, int* runs) {
  HloPassFix fix("fix");
  fix.AddPass(std::make_unique<CountingPass>(changes, runs));
  HloModule module("m");
  return fix.Run(&module);
}

TEST(HloPassFix, UnchangedModuleRunsOneRound) {
  int runs = 0;
  EXPECT_FALSE(RunFixOfOne(0, &runs));
  EXPECT_EQ(runs, 1);
}

TEST(HloPassFix, PassesThatNeverSettleStopAtTheBound) {
  int runs = 0;
  EXPECT_TRUE(RunFixOfOne(1000, &runs));
  EXPECT_EQ(runs, HloPassFix::kMaxRounds);
}

}  // namespace
