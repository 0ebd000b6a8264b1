// Short sharded HLO modules that the sharding tests share
// (analysis/sharding_analysis_test.cc, tensor_splitter/tensor_splitter_sharding_test.cc).
#ifndef EXLA_TESTS_CC_SHARDED_MODULES_H_
#define EXLA_TESTS_CC_SHARDED_MODULES_H_

#include <string>

namespace exla_test {

// An f32 add reducer named `sum`.
inline constexpr char kSumReducer[] = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}
)";

// Points cut by rows over 8 devices.
inline constexpr char kRows[] = "{devices=[8,1]<=[8]}";

// The Gaussian kernel matvec k(x_i, y_j) . v of 64 points x (`x_sharding`)
// and y (`y_sharding`; y is x itself when `y` is "x"), v on every device:
// the 64 x 64 x 4 f32 difference d is 64 KB, 8 KB on each of 8 devices.
inline std::string ShardedKernelMatvec(const std::string& x_sharding,
                                       const std::string& y_sharding,
                                       const std::string& y = "y",
                                       const std::string& header = "HloModule m") {
  return header + "\n" + kSumReducer + R"(
ENTRY main {
  x = f32[64,4]{1,0} parameter(0), sharding=)" + x_sharding + R"(
  y = f32[64,4]{1,0} parameter(1), sharding=)" + y_sharding + R"(
  v = f32[64]{0} parameter(2), sharding={replicated}
  bx = f32[64,64,4]{2,1,0} broadcast(x), dimensions={0,2}
  by = f32[64,64,4]{2,1,0} broadcast()" + y + R"(), dimensions={1,2}
  d = f32[64,64,4]{2,1,0} subtract(bx, by)
  zero = f32[] constant(0)
  s = f32[64,64]{1,0} reduce(d, zero), dimensions={2}, to_apply=sum
  k = f32[64,64]{1,0} exponential(s)
  ROOT kv = f32[64]{0} dot(k, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
}

}  // namespace exla_test

#endif  // EXLA_TESTS_CC_SHARDED_MODULES_H_
