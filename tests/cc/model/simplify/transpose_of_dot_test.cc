// XLA's algebraic simplifier turning the transpose of a matrix product into
// the product with its operands swapped (cc/model/simplify/transpose_of_dot.h).
#include <string>

#include "model/simplify/transpose_of_dot.h"
#include "tests/cc/filecheck.h"
#include "tests/cc/model/simplify/simplify_test_util.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::TransposeOfDot;
using exla_test::FileCheck;
using exla_test::RunSimplification;

// d = a b^T (64x128), transposed by `permutation` into `transposed`; `extra`
// adds lines before the root.
std::string TransposedProduct(const std::string& transposed, const std::string& permutation,
                              const std::string& extra = "") {
  return R"(HloModule m

ENTRY e {
  a = f32[64,4]{1,0} parameter(0)
  b = f32[128,4]{1,0} parameter(1)
  d = f32[64,128]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
)" + extra + "  ROOT t = " + transposed + " transpose(d), dimensions={" + permutation + "}\n}\n";
}

TEST(TransposeOfDot, TransposedProductIsTheProductSwapped) {
  TransposeOfDot pass;
  const auto run = RunSimplification(pass, TransposedProduct("f32[128,64]{1,0}", "1,0"));
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK:     ROOT t.dot = f32[128,64]{1,0} dot(b, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
    CHECK-NOT: transpose(
  )"));
}

TEST(TransposeOfDot, BatchedProductKeepsItsBatchDimensions) {
  TransposeOfDot pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  a = f32[3,64,4]{2,1,0} parameter(0)
  b = f32[3,4,128]{2,1,0} parameter(1)
  d = f32[3,64,128]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = f32[3,128,64]{2,1,0} transpose(d), dimensions={0,2,1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, R"(
    CHECK: ROOT t.dot = f32[3,128,64]{2,1,0} dot(b, a), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  )"));
}

TEST(TransposeOfDot, ProductReadElsewhereIsLeft) {
  // The product is stored for its other reader anyway: XLA keeps the
  // transpose.
  TransposeOfDot pass;
  const auto run = RunSimplification(
      pass, TransposedProduct("f32[128,64]{1,0}", "1,0", "  n = f32[64,128]{1,0} negate(d)\n"));
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT t = f32[128,64]{1,0} transpose(d), dimensions={1,0}"));
}

TEST(TransposeOfDot, ProductWithTwoFreeDimensionsOnASideIsLeft) {
  // Not the form DotDecomposer gives dots, which the rewrite needs.
  TransposeOfDot pass;
  const auto run = RunSimplification(pass, R"(HloModule m

ENTRY e {
  a = f32[8,8,4]{2,1,0} parameter(0)
  b = f32[128,4]{1,0} parameter(1)
  d = f32[8,8,128]{2,1,0} dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[8,128,8]{2,1,0} transpose(d), dimensions={0,2,1}
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_TRUE(FileCheck(run.text, "CHECK: ROOT t = f32[8,128,8]{2,1,0} transpose(d)"));
}

}  // namespace
