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

// A loop that counts `trips` trips and takes the exponential of its state
// on each; the entry reads the state the loop leaves.
inline std::string CountedLoop(int trips) {
  return R"(HloModule m

body {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[8]{0} exponential(x)
  ROOT t = (s32[], f32[8]{0}) tuple(i1, e)
}

cond {
  p = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant()" + std::to_string(trips) + R"()
  ROOT c = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[8]{0}) tuple(zero, x)
  w = (s32[], f32[8]{0}) while(t), condition=cond, body=body
  ROOT r = f32[8]{0} get-tuple-element(w), index=1
}
)";
}

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_MODEL_SIMPLIFY_SIMPLIFY_TEST_UTIL_H_
