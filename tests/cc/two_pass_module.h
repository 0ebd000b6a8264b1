// A module whose loops compute a large value twice unless a plan keeps it
// whole (kKeepWhole), shared by tensor_splitter/keep_whole_test.cc and
// search/plan_search_test.cc.
#ifndef EXLA_TESTS_CC_TWO_PASS_MODULE_H_
#define EXLA_TESTS_CC_TWO_PASS_MODULE_H_

#include <cstdint>
#include <string>

namespace exla_test {

// K = exp(x yᵀ) (`rows` x `cols` f32, x and y 16 wide) feeds r1 = K v and,
// through the total of r1, r2 = Kᵀ (w g): the second product needs the
// first one whole, so no single loop serves both, and by default a second
// loop computes D = x yᵀ and K again. Computation `name`.
inline std::string TwoPassModule(const std::string& name, int64_t rows, int64_t cols) {
  const std::string r = std::to_string(rows), c = std::to_string(cols);
  return "HloModule " + name + R"(

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY )" + name + R"( {
  x = f32[)" + r + R"(,16] parameter(0)
  y = f32[)" + c + R"(,16] parameter(1)
  v = f32[)" + c + R"(,1] parameter(2)
  w = f32[)" + r + R"(,1] parameter(3)
  d = f32[)" + r + "," + c + R"(] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  k = f32[)" + r + "," + c + R"(] exponential(d)
  r1 = f32[)" + r + R"(,1] dot(k, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  g = f32[] reduce(r1, zero), dimensions={0,1}, to_apply=add
  gb = f32[)" + r + R"(,1] broadcast(g), dimensions={}
  wg = f32[)" + r + R"(,1] multiply(w, gb)
  r2 = f32[)" + c + R"(,1] dot(k, wg), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[)" + r + R"(,1], f32[)" + c + R"(,1]) tuple(r1, r2)
}
)";
}

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_TWO_PASS_MODULE_H_
