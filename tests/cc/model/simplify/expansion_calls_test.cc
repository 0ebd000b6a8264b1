// Which of XLA's expansions stay calls (cc/model/simplify/expansion_calls.h).
#include <set>
#include <string>

#include "model/simplify/expansion_calls.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::ExpansionCalls;
using exla_test::RunSimplification;

TEST(ExpansionCalls, SolvesOfOneSignatureShareAnExpansion) {
  std::set<std::string> shared;
  ExpansionCalls pass(&shared);
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  a = f32[16,16]{1,0} parameter(0)
  b = f32[16,4]{1,0} parameter(1)
  c = f32[16,4]{1,0} parameter(2)
  l = f32[16,16]{1,0} cholesky(a), lower=true
  s1 = f32[16,4]{1,0} triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  s2 = f32[16,4]{1,0} triangular-solve(l, c), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT r = f32[16,4]{1,0} add(s1, s2)
}
)");
  EXPECT_FALSE(run.changed) << "the pass records; it rewrites nothing";
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared.begin()->substr(0, 16), "triangular-solve");
}

}  // namespace
