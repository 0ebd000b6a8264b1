// Runs one of the model's simplification passes (cc/model/simplify/) on a
// module written as text. The model's rewrites need not make a module XLA
// would accept (a folded literal stands for its expression, not its value),
// so unlike tests/cc/pass_test_bench.h this does not verify the result.
#ifndef EXLA_TESTS_CC_MODEL_SIMPLIFY_SIMPLIFY_TEST_UTIL_H_
#define EXLA_TESTS_CC_MODEL_SIMPLIFY_SIMPLIFY_TEST_UTIL_H_

#include <memory>
#include <string>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "pass/pass.h"

namespace exla_test {

struct SimplifyRun {
  std::unique_ptr<exla::HloModule> module;
  std::string text;  // the module after the pass, printed
  bool changed = false;
};

inline SimplifyRun RunSimplification(exla::HloPass& pass, const std::string& hlo_text) {
  SimplifyRun run;
  run.module = exla::ParseHloModule(hlo_text);
  run.changed = pass.Run(run.module.get());
  run.text = exla::PrintHloModule(*run.module);
  return run;
}

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_MODEL_SIMPLIFY_SIMPLIFY_TEST_UTIL_H_
