#include "model/fusion/fusion_duplication.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ir/pattern_matcher.h"
#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// Saturates the counts: a chain of shape changes multiplies them.
constexpr int64_t kCountCap = int64_t{1} << 40;

// What one instruction is within one fused loop: the users that index it
// (nullptr: the loop's own result index) and how often the loop emits it.
struct Emission {
  std::unordered_set<const HloInstruction*> indexing_users;
  int64_t count = 0;
  int64_t readers = 0;  // the instructions of the loop that read it directly
};

// Per instruction, per loop (by the loop's root instruction) it is folded into.
using Loops = std::unordered_map<const HloInstruction*, Emission>;

// Instructions whose emitted code does not keep the elements it computed
// for reuse at the same index (ElementalIrEmitter::OpInvalidatesCache):
// a concatenation, a pad, a reduction. Of those the model folds into
// loops, XLA folds one only where the loop emits it once and it has one
// reader (FusionNodeIndexingEvaluation::CodeDuplicationTooHigh);
// otherwise the fused loop would compute it anew at every read.
bool EmittedWithoutCache(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kConcatenate) || instruction.Is(HloOpcode::kPad) ||
         instruction.Is(HloOpcode::kReduce) || instruction.Is(HloOpcode::kDynamicUpdateSlice);
}

// Whether XLA's layout assignment gives each reader of `instruction` a
// transposing copy of its own: it lays a transpose out as a bitcast of its
// operand and copies it into the row-major layout each reader asks for
// (cpu_layout_assignment.cc), so a transpose read by several instructions
// reads its operand once per reader, each copy fused into its reader.
bool CopiedPerReader(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kTranspose) && instruction.users().size() > 1;
}

// The instructions that read `instruction` once XLA's simplifier has
// removed the views that change nothing, and layout assignment has
// replaced a transpose read more than once by a copy per reader.
void CollectReaders(const HloInstruction& instruction, std::unordered_set<const HloInstruction*>* readers) {
  for (const HloInstruction* user : instruction.users()) {
    if (m::MovesNoElement(user) || CopiedPerReader(*user)) {  // removed before fusion; copied
      CollectReaders(*user, readers);
    } else {
      readers->insert(user);
    }
  }
}

// Whether `user` reads `operand` at its own index: XLA reuses the index of
// an elementwise use (same dimensions, whatever the element type) and of a
// transpose (its index permuted); any other use computes a new one.
bool ReusesIndex(const HloInstruction& user, const HloInstruction& operand) {
  if (user.Is(HloOpcode::kTranspose)) return true;
  return user.shape().IsArray() && operand.shape().IsArray() && user.shape().dims() == operand.shape().dims();
}

// Whether the instruction is folded into its users' loops (a view of a
// folded value travels with it, so it is counted like one).
bool MayBeFolded(const HloInstruction& instruction, Holding holding) {
  if (holding == Holding::kFused) return true;
  return holding == Holding::kOperand && instruction.operand_count() == 1 &&
         !instruction.Is(HloOpcode::kGetTupleElement) && !instruction.Is(HloOpcode::kTuple);
}

class DuplicationCounter {
 public:
  std::unordered_set<const HloInstruction*> Run(const HloComputation& computation) {
    std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
    std::reverse(order.begin(), order.end());  // users before their operands
    for (const HloInstruction* instruction : order) Visit(*instruction);
    return over_duplicated_;
  }

 private:
  // A loop's root: its result is emitted once per index of the loop.
  void StartLoop(const HloInstruction& root) {
    Emission own;
    own.indexing_users.insert(nullptr);
    own.count = 1;
    loops_[&root] = {{&root, own}};
    reductions_[&root] = root.Is(HloOpcode::kReduce) ? 1 : 0;
  }

  // Whether folding the reduction `instruction` into `loops` would give
  // one of them more reductions than XLA puts in one fusion; if not,
  // counts it in each.
  bool TooManyReductions(const HloInstruction& instruction, const Loops& loops) {
    if (!instruction.Is(HloOpcode::kReduce)) return false;
    for (const auto& [loop, emission] : loops) {
      if (reductions_[loop] >= kMaxReductionsInFusion) return true;
    }
    for (const auto& [loop, emission] : loops) ++reductions_[loop];
    return false;
  }

  int64_t CountOf(const HloInstruction* indexing_user, const HloInstruction* loop) const {
    if (indexing_user == nullptr) return 1;
    auto user = loops_.find(indexing_user);
    if (user == loops_.end()) return 0;
    auto emission = user->second.find(loop);
    return emission == user->second.end() ? 0 : emission->second.count;
  }

  // The loops `instruction` is folded into, with its indexing users in each.
  Loops Gather(const HloInstruction& instruction) const {
    Loops mine;
    for (const HloInstruction* user : instruction.users()) {
      auto theirs = loops_.find(user);
      if (theirs == loops_.end()) continue;
      const bool reuses = ReusesIndex(*user, instruction);
      for (const auto& [loop, emission] : theirs->second) {
        ++mine[loop].readers;
        std::unordered_set<const HloInstruction*>& users = mine[loop].indexing_users;
        if (reuses) {
          users.insert(emission.indexing_users.begin(), emission.indexing_users.end());
        } else {
          users.insert(user);
        }
      }
    }
    for (auto& [loop, emission] : mine) {
      for (const HloInstruction* user : emission.indexing_users) {
        emission.count = std::min(kCountCap, emission.count + CountOf(user, loop));
      }
    }
    return mine;
  }

  // Whether some loop would emit `instruction` more often than XLA allows.
  // Broadcasts are always folded.
  static bool TooOften(const HloInstruction& instruction, const Loops& loops) {
    if (instruction.Is(HloOpcode::kBroadcast)) return false;
    for (const auto& [loop, emission] : loops) {
      if (emission.count > kAllowedCodeDuplication) return true;
    }
    return false;
  }

  // Whether the expensive `instruction` would be folded into several loops.
  // XLA computes an expensive value once: it does not fold it into a second
  // loop, even one it reaches through cheap values that XLA does duplicate
  // (a sum of divisions that two loops read is summed in both, the
  // divisions are written out).
  static bool InSeveralLoops(const HloInstruction& instruction, const Loops& loops) {
    return IsExpensive(instruction) && loops.size() > 1;
  }

  // Whether XLA leaves `instruction`, emitted without a cache, out of the
  // loops it reaches: one of them would emit it more than once, or it has
  // more than one reader (a sum s joined to 0.5 * s by a concatenation).
  static bool ComputedAtEachRead(const HloInstruction& instruction, const Loops& loops) {
    if (!EmittedWithoutCache(instruction)) return false;
    int64_t loop_readers = 0;  // a cheap reader copied into two loops reads it twice
    for (const auto& [loop, emission] : loops) {
      if (emission.count > 1) return true;
      loop_readers += emission.readers;
    }
    if (loop_readers > 1) return true;
    std::unordered_set<const HloInstruction*> readers;
    CollectReaders(instruction, &readers);
    return readers.size() > 1;
  }

  void Visit(const HloInstruction& instruction) {
    const Holding holding = HoldingOf(instruction);
    if (!MayBeFolded(instruction, holding)) {
      StartLoop(instruction);
      return;
    }
    Loops mine = Gather(instruction);
    if (holding == Holding::kFused &&
        (TooOften(instruction, mine) || InSeveralLoops(instruction, mine) ||
         ComputedAtEachRead(instruction, mine) || TooManyReductions(instruction, mine))) {
      over_duplicated_.insert(&instruction);
      StartLoop(instruction);
      return;
    }
    loops_[&instruction] = std::move(mine);
  }

  std::unordered_map<const HloInstruction*, Loops> loops_;
  std::unordered_set<const HloInstruction*> over_duplicated_;
  std::unordered_map<const HloInstruction*, int64_t> reductions_;  // per loop root
};

}  // namespace

std::unordered_set<const HloInstruction*> OverDuplicatedProducers(const HloComputation& computation) {
  return DuplicationCounter().Run(computation);
}

}  // namespace exla
