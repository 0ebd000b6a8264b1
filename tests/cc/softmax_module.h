// The module around a softmax's entry computation, with the scalar sum and
// maximum its reductions apply, shared by the tests of the softmax rules
// (tensor_splitter/reduction_merge_test.cc, weighted_sums_test.cc,
// product_row_sums_test.cc) and of the plan search's choice between one
// pass and two (search/plan_search_test.cc).
#ifndef EXLA_TESTS_CC_SOFTMAX_MODULE_H_
#define EXLA_TESTS_CC_SOFTMAX_MODULE_H_

#include <string>

namespace exla_test {

// Module `m` with computations `sum` and `max` (f32) and the entry `main`
// whose lines are `entry` (ending in its ROOT).
inline std::string SoftmaxModule(const std::string& entry) {
  return "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nmax {\n  a = f32[] parameter(0)\n"
         "  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY main {\n" +
         entry + "}\n";
}

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_SOFTMAX_MODULE_H_
