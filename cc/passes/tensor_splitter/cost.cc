#include "passes/tensor_splitter/cost.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace exla {
namespace {

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

}  // namespace

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
  loop.extents = LargestArray(anchor.shape()).dims();
  loop.dimension = dim;
  loop.extent = region.size;
  loop.chunk = chunk;
  loop.chunks = region.size / chunk;
  loop.remainder = region.size % chunk;
  loop.members = static_cast<int64_t>(region.members.size());
  return loop;
}

void KeepRecomputedThatStayed(SplitLoop* loop, const HloComputation& computation) {
  std::vector<std::string> stayed;
  loop->recomputed_flops = 0;
  for (std::string& name : loop->recomputed) {
    const HloInstruction* producer = computation.FindInstruction(name);
    if (producer == nullptr) continue;
    loop->recomputed_flops += InstructionFlops(*producer);
    stayed.push_back(std::move(name));
  }
  loop->recomputed = std::move(stayed);
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
  if (!loop.accumulated.empty()) {
    out << ", accumulates";
    for (size_t k = 0; k < loop.accumulated.size(); ++k) {
      out << (k ? ", " : " ") << loop.accumulated[k];
    }
    out << " in the same pass";
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
