#include "passes/tensor_splitter.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "passes/dce.h"
#include "passes/split_region.h"

namespace exla {
namespace {

// Safety net: a module never needs more loops than it has instructions.
constexpr int kMaxRewritesPerComputation = 1000;

int64_t LargestArrayBytes(const Shape& shape) {
  if (!shape.IsTuple()) return shape.ByteSize();
  int64_t largest = 0;
  for (const Shape& element : shape.tuple_shapes()) {
    largest = std::max(largest, LargestArrayBytes(element));
  }
  return largest;
}

// Inputs and literals are already in memory; splitting starts at the first
// instruction that *creates* an oversized value.
bool IsSplitCandidate(const HloInstruction& instruction, int64_t threshold) {
  if (instruction.Is("parameter") || instruction.Is("constant")) return false;
  // Loop state read from a parameter is an input as well, and a
  // dynamic-update-slice writes into a buffer that exists already.
  if (instruction.Is("get-tuple-element") && instruction.operand(0)->Is("parameter")) return false;
  if (instruction.Is("dynamic-update-slice")) return false;
  if (instruction.shape().IsTuple() && !instruction.Is("sort")) return false;
  return LargestArrayBytes(instruction.shape()) > threshold;
}

// Computations that run as ordinary sequential code (entry, loop bodies,
// branches), as opposed to scalar reducers and comparators.
std::vector<HloComputation*> ControlFlowComputations(HloModule* module) {
  std::unordered_set<HloComputation*> scalar_callees;
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const HloAttribute& attribute : instruction->attributes()) {
        if (attribute.key == "to_apply" && !instruction->Is("call")) {
          for (HloComputation* callee : attribute.computations) scalar_callees.insert(callee);
        }
      }
    }
  }
  std::vector<HloComputation*> result;
  for (const auto& computation : module->computations()) {
    if (!scalar_callees.count(computation.get())) result.push_back(computation.get());
  }
  return result;
}

// Candidate dimensions, largest extent first: splitting the longest
// dimension gives the most freedom in choosing the chunk.
std::vector<int64_t> DimensionsBySize(const Shape& shape) {
  const Shape& array = shape.IsTuple() ? shape.tuple_shape(0) : shape;
  std::vector<int64_t> dims(array.rank());
  std::iota(dims.begin(), dims.end(), 0);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return array.dim(static_cast<int>(a)) > array.dim(static_cast<int>(b));
  });
  return dims;
}

}  // namespace

bool TensorSplitter::Run(HloModule* module, const Options& options) {
  const int64_t threshold = options.tensor_size_threshold;
  if (threshold <= 0) return false;
  // Without an explicit split size, slices of a quarter of the threshold
  // leave room for the few slices a loop body keeps alive at once.
  const int64_t split_size = options.tensor_split_size > 0
                                 ? std::min(options.tensor_split_size, threshold)
                                 : std::max<int64_t>(1, threshold / 4);
  bool changed = false;
  // (computation, limit) pairs; loop bodies we create are held to split_size.
  std::vector<std::pair<HloComputation*, int64_t>> work;
  for (HloComputation* computation : ControlFlowComputations(module)) {
    work.push_back({computation, threshold});
  }
  std::unordered_set<const HloInstruction*> reported;
  while (!work.empty()) {
    auto [computation, limit] = work.back();
    work.pop_back();
    std::unordered_set<const HloInstruction*> given_up;
    for (int rewrites = 0; rewrites < kMaxRewritesPerComputation; ++rewrites) {
      HloInstruction* seed = nullptr;
      for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        if (!given_up.count(instruction) && IsSplitCandidate(*instruction, limit)) {
          seed = instruction;
          break;
        }
      }
      if (seed == nullptr) break;
      std::string reason;
      bool split = false;
      for (int64_t dim : DimensionsBySize(seed->shape())) {
        SplitRegion region;
        std::string error = BuildSplitRegion(seed, dim, limit, &region);
        if (!error.empty()) {
          if (reason.empty()) reason = "dimension " + std::to_string(dim) + ": " + error;
          continue;
        }
        int64_t chunk = std::max<int64_t>(1, split_size / std::max<int64_t>(1, region.max_bytes_per_unit));
        // At least two pieces, or the loop would rebuild the whole tensor.
        chunk = std::min(chunk, (region.size + 1) / 2);
        if (region.size < 2) {
          if (reason.empty()) reason = "dimension " + std::to_string(dim) + " has extent 1";
          continue;
        }
        for (HloComputation* body : RewriteRegionAsLoops(region, chunk)) {
          // One unit of the split dimension may still exceed the split size:
          // split the body again on another dimension (nested loops).
          work.push_back({body, split_size});
        }
        RemoveDeadInstructions(computation);
        split = true;
        changed = true;
        break;
      }
      if (!split) {
        given_up.insert(seed);
        if (reported.insert(seed).second) {
          Log("left " + computation->name() + "/" + seed->name() + " " + seed->shape().ToString(false) +
              " (" + HumanBytes(LargestArrayBytes(seed->shape())) + ") unsplit: " + reason);
        }
      }
    }
  }
  return changed;
}

}  // namespace exla
