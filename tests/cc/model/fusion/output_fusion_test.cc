// The matrix-vector products XLA CPU fuses into the add that reads them
// (cc/model/fusion/output_fusion.h). Each module's figure is XLA's own
// planned temp (jaxlib 0.7.1's buffer assignment).
#include <string>

#include "model/xla_cpu_model.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::MemoryPrediction;
using exla::PredictMemory;

// A 32 KiB matrix a, computed from slices of p; `tail` reads it.
std::string MatrixThen(const std::string& tail) {
  return R"(HloModule m

ENTRY e {
  p = f64[64,128]{1,0} parameter(0)
  v = f64[64]{0} parameter(1)
  u = f64[64]{0} parameter(2)
  q0 = f64[64,64]{1,0} slice(p), slice={[0:64], [0:64]}
  q1 = f64[64,64]{1,0} slice(p), slice={[0:64], [64:128]}
  h = f64[] constant(0.5)
  hb = f64[64,64]{1,0} broadcast(h), dimensions={}
  m = f64[64,64]{1,0} multiply(q1, hb)
  a = f64[64,64]{1,0} add(q0, m)
)" + tail + "}\n";
}

TEST(OutputFusion, MatrixOfAProductAnAddReadsIsWrittenOut) {
  // The dot is fused into the add: nothing is fused into it, so a is
  // written to memory (XLA: 32768).
  const MemoryPrediction p = PredictMemory(MatrixThen(R"(  d = f64[64]{0} dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = f64[64]{0} add(d, u)
)"));
  EXPECT_EQ(p.temp_bytes, 64 * 64 * 8);
}

TEST(OutputFusion, MatrixOfAProductAMultiplyReadsIsFusedIntoTheDot) {
  // Not an add: the dot is a loop of its own that computes a (XLA: 0).
  const MemoryPrediction p = PredictMemory(MatrixThen(R"(  d = f64[64]{0} dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = f64[64]{0} multiply(d, u)
)"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(OutputFusion, AddThatFusesAnotherOperandFirstLeavesTheDotAlone) {
  // The negation comes later in post order: the add takes it into a loop
  // first and the dot stays a loop of its own, with a in it (XLA: 0).
  const MemoryPrediction p = PredictMemory(MatrixThen(R"(  d = f64[64]{0} dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  nu = f64[64]{0} negate(u)
  ROOT r = f64[64]{0} add(d, nu)
)"));
  EXPECT_EQ(p.temp_bytes, 0);
}

TEST(OutputFusion, AddOfTwoProductsFusesTheLaterOne) {
  // d comes later in post order: it is fused into the add and reads a from
  // memory; d2 is a loop that computes a again (XLA: 32768, a alone).
  const MemoryPrediction p = PredictMemory(MatrixThen(R"(  d = f64[64]{0} dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  d2 = f64[64]{0} dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f64[64]{0} add(d2, d)
)"));
  EXPECT_EQ(p.temp_bytes, 64 * 64 * 8);
}

TEST(OutputFusion, ProductReadThroughAReshapeIsNotFusedIntoTheAdd) {
  // XLA drops the dot's dimension of extent 1 and reads its result through
  // a bitcast, which the add's other operand keeps from sinking below the
  // add: the dot is a loop of its own that computes a (XLA: 512, the
  // dot's result).
  const MemoryPrediction p = PredictMemory(R"(HloModule m

ENTRY e {
  p = f64[64,128]{1,0} parameter(0)
  v = f64[64,1]{1,0} parameter(1)
  u = f64[64,1]{1,0} parameter(2)
  q0 = f64[64,64]{1,0} slice(p), slice={[0:64], [0:64]}
  q1 = f64[64,64]{1,0} slice(p), slice={[0:64], [64:128]}
  h = f64[] constant(0.5)
  hb = f64[64,64]{1,0} broadcast(h), dimensions={}
  m = f64[64,64]{1,0} multiply(q1, hb)
  a = f64[64,64]{1,0} add(q0, m)
  d = f64[64,1]{1,0} dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = f64[64,1]{1,0} add(d, u)
}
)");
  EXPECT_LT(p.temp_bytes, 64 * 64 * 8);
}

}  // namespace
