#include "passes/tensor_splitter/cost.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace exla {
namespace {

int64_t ElementsOf(const Shape& shape) {
  if (!shape.IsTuple()) return shape.ElementCount();
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes()) total += ElementsOf(element);
  return total;
}

// Reads "1.5 GFLOP"-style figures more easily than 1500000000.
std::string HumanFlops(int64_t flops) {
  static const char* const kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  double value = static_cast<double>(flops);
  int unit = 0;
  while (value >= 1000.0 && unit < 5) {
    value /= 1000.0;
    ++unit;
  }
  std::ostringstream out;
  out.precision(unit == 0 ? 0 : 3);
  out << (unit == 0 ? std::fixed : std::defaultfloat) << value << " " << kUnits[unit];
  return out.str();
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
      int64_t contracted = 1;
      const Shape& lhs = instruction.operand(0)->shape();
      for (int64_t d : instruction.dot_dimensions().lhs_contracting) {
        contracted *= lhs.dim(static_cast<int>(d));
      }
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
    if (instruction->Is(HloOpcode::kWhile) || instruction->Is(HloOpcode::kCall) ||
        instruction->Is(HloOpcode::kConditional)) {
      for (const HloComputation* callee : instruction->called_computations()) {
        total += ComputationFlops(*callee);
      }
    }
  }
  return total;
}

SplitLoop DescribeSplit(const SplitRegion& region, const HloInstruction& anchor, int64_t dim,
                        int64_t chunk) {
  SplitLoop loop;
  // A member that keeps users outside the region stays where it is, and so
  // do the members it reads: the loop computes all of them a second time.
  std::vector<const HloInstruction*> recomputed;
  std::vector<const HloInstruction*> stack;
  std::unordered_set<const HloInstruction*> staying;
  for (const auto& [member, info] : region.members) {
    if (std::find(region.exits.begin(), region.exits.end(), member) != region.exits.end()) continue;
    const bool used_outside = std::any_of(
        member->users().begin(), member->users().end(),
        [&](const HloInstruction* user) { return !region.Contains(user); });
    if (used_outside && staying.insert(member).second) stack.push_back(member);
  }
  while (!stack.empty()) {
    const HloInstruction* member = stack.back();
    stack.pop_back();
    recomputed.push_back(member);
    loop.recomputed_flops += InstructionFlops(*member);
    for (const HloInstruction* operand : member->operands()) {
      if (region.Contains(operand) && staying.insert(operand).second) stack.push_back(operand);
    }
  }
  // Deterministic output: the members map is unordered.
  std::sort(recomputed.begin(), recomputed.end(),
            [](const HloInstruction* a, const HloInstruction* b) { return a->name() < b->name(); });
  for (const HloInstruction* member : recomputed) loop.recomputed.push_back(member->name());
  loop.computation = anchor.parent()->name();
  loop.instruction = anchor.name();
  loop.shape = anchor.shape().ToString(false);
  loop.bytes = LargestArrayBytes(anchor.shape());
  loop.dimension = dim;
  loop.extent = region.size;
  loop.chunk = chunk;
  loop.chunks = region.size / chunk;
  loop.remainder = region.size % chunk;
  loop.members = static_cast<int64_t>(region.members.size());
  return loop;
}

std::string SplitNoteText(const SplitLoop& loop) { return "split " + SplitDescription(loop); }

std::string SplitDescription(const SplitLoop& loop) {
  std::ostringstream out;
  out << loop.computation << "/" << loop.instruction << " " << loop.shape << " ("
      << HumanBytes(loop.bytes) << ") on dimension " << loop.dimension << " of extent "
      << loop.extent << ": " << loop.chunks << (loop.chunks == 1 ? " chunk" : " chunks") << " of "
      << loop.chunk;
  if (loop.remainder != 0) out << " and one of " << loop.remainder;
  out << ", " << loop.members << " instructions in the loop";
  if (loop.recomputed.empty()) {
    out << ", nothing recomputed";
  } else {
    // A gradient can recompute dozens of producers: the first few name it.
    constexpr size_t kNamed = 6;
    out << ", recomputes";
    for (size_t k = 0; k < std::min(loop.recomputed.size(), kNamed); ++k) {
      out << (k ? ", " : " ") << loop.recomputed[k];
    }
    if (loop.recomputed.size() > kNamed) out << " and " << loop.recomputed.size() - kNamed << " more";
    out << " (" << HumanFlops(loop.recomputed_flops) << ")";
  }
  return out.str();
}

std::string UnsplitSizeText(const UnsplitTensor& tensor) {
  return HumanBytes(tensor.bytes) + (tensor.per_device ? " per device" : "");
}

std::string UnsplitNoteText(const UnsplitTensor& tensor) {
  return "left " + tensor.computation + "/" + tensor.instruction + " " + tensor.shape + " (" +
         UnsplitSizeText(tensor) + ") unsplit: " + tensor.reason;
}

std::string RecomputationNoteText(int64_t recomputed_flops, int64_t program_flops) {
  std::string share = "n/a";  // a program without arithmetic
  if (program_flops > 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.1f%%",
                  100.0 * static_cast<double>(recomputed_flops) / static_cast<double>(program_flops));
    share = buffer;
  }
  return "recomputation: " + std::to_string(recomputed_flops) + " flops (" + share +
         " of the program's " + std::to_string(program_flops) + ")";
}

}  // namespace exla
