#include "analysis/flops.h"

#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/control_flow.h"

namespace exla {
namespace {

int64_t ElementsOf(const Shape& shape) {
  if (!shape.IsTuple()) return shape.ElementCount();
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes()) total += ElementsOf(element);
  return total;
}

// Two per multiply-add: every result element sums over the kernel's window
// and input features, i.e. the kernel's elements per output feature. The
// output feature dimension of the kernel is the letter 'o' of dim_labels
// (`b01f_01io->b01f`); without it the kernel is taken as one window.
int64_t ConvolutionFlops(const HloInstruction& convolution) {
  const Shape& kernel = convolution.operand(1)->shape();
  int64_t per_output = kernel.ElementCount();
  if (std::optional<std::string> labels = convolution.RawAttribute("dim_labels")) {
    const size_t begin = labels->find('_');
    const size_t end = labels->find("->");
    if (begin != std::string::npos && end != std::string::npos && begin < end) {
      const std::string kernel_labels = labels->substr(begin + 1, end - begin - 1);
      const size_t o = kernel_labels.find('o');
      if (o != std::string::npos && static_cast<int>(o) < kernel.rank() &&
          kernel.dim(static_cast<int>(o)) > 0) {
        per_output /= kernel.dim(static_cast<int>(o));
      }
    }
  }
  return 2 * convolution.shape().ElementCount() * per_output;
}

}  // namespace

int64_t InstructionFlops(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kDot: {
      // Every result element is a sum over the contracting dimensions.
      const int64_t contracted = instruction.operand(0)->shape().ExtentAlong(
          instruction.dot_dimensions().lhs_contracting);
      return 2 * instruction.shape().ElementCount() * contracted;
    }
    case HloOpcode::kTriangularSolve: {
      // Substitution with an n x n triangle costs n^2 per right-hand side
      // (n^2 / 2 multiply-adds); the result has n x k elements per batch.
      const Shape& a = instruction.operand(0)->shape();
      const int64_t n = a.dim(a.rank() - 1);
      return instruction.shape().ElementCount() * n;
    }
    case HloOpcode::kCholesky: {
      // n^3 / 3 per n x n matrix of the batch.
      const Shape& a = instruction.shape();
      const int64_t n = a.dim(a.rank() - 1);
      return a.ElementCount() / 3 * n;
    }
    case HloOpcode::kConvolution:
      return ConvolutionFlops(instruction);
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: {
      int64_t inputs = 0;
      // The first half of a variadic reduce's operands are the inputs, the
      // second half their initial values.
      const int count = instruction.operand_count() / 2;
      for (int k = 0; k < count; ++k) inputs += ElementsOf(instruction.operand(k)->shape());
      return inputs;
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kGather:
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
      return 0;
    default:
      return instruction.IsElementwise() ? ElementsOf(instruction.shape()) : 0;
  }
}

int64_t ComputationFlops(const HloComputation& computation) {
  int64_t total = 0;
  for (const auto& instruction : computation.instructions()) {
    total += InstructionFlops(*instruction);
    // Scalar reducers (to_apply of a reduce) are already counted per element.
    if (IsControlFlow(instruction->opcode())) {
      for (const HloComputation* callee : instruction->called_computations()) {
        total += ComputationFlops(*callee);
      }
    }
  }
  return total;
}

int64_t SortComparisons(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kSort) || instruction.operand_count() == 0) return 0;
  const Shape& keys = instruction.operand(0)->shape();
  const std::vector<int64_t> dimensions = instruction.dimensions();
  if (!keys.IsArray() || dimensions.size() != 1 || dimensions[0] < 0 ||
      dimensions[0] >= keys.rank()) {
    return 0;
  }
  const int64_t n = keys.dim(static_cast<int>(dimensions[0]));
  if (n < 2) return 0;
  int64_t log2 = 0;
  while ((int64_t{1} << log2) < n) ++log2;  // ceil(log2 n)
  return keys.ElementCount() * log2;
}

int64_t TopKElements(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kTopK) || instruction.operand_count() != 1) return 0;
  const Shape& input = instruction.operand(0)->shape();
  return input.IsArray() ? input.ElementCount() : 0;
}

bool IsTranscendental(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kAtan2:
    case HloOpcode::kCbrt:
    case HloOpcode::kCos:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kPower:
    case HloOpcode::kSin:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsExpensiveElementwise(const HloInstruction& instruction) {
  const PrimitiveType type =
      instruction.shape().IsArray() ? instruction.shape().element_type() : PrimitiveType::kInvalid;
  switch (instruction.opcode()) {
    // Cheap for real numbers, expensive for complex ones.
    case HloOpcode::kAbs:
    case HloOpcode::kCos:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kTan:
      return IsComplexType(type);
    // XLA calls integer division by a literal cheap (multiplies and shifts);
    // the model keeps every integer division cheap.
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
      return IsFloatingPointType(type) || IsComplexType(type);
    // Beyond the transcendental functions the cost model rates apart.
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSinh:
    case HloOpcode::kSqrt:
      return true;
    default:
      return IsTranscendental(instruction);
  }
}

}  // namespace exla
