#include "model/simplify/dead_loop_elements.h"

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "analysis/loop_state.h"
#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

int64_t Index(const HloInstruction& read) { return read.IntAttribute("index").value_or(-1); }

// Whether everything that reads the state parameter of `computation` reads
// one element of it: XLA refuses to look into a loop whose state is read
// whole.
bool ReadByElement(const HloComputation& computation) {
  const std::vector<HloInstruction*> parameters = computation.parameters();
  if (parameters.size() != 1) return false;
  for (const HloInstruction* user : parameters[0]->users()) {
    if (!user->Is(HloOpcode::kGetTupleElement) && user != computation.root()) return false;
  }
  return true;
}

// The elements of `loop`'s result that something reads after it; nullopt
// when the result is read whole (the computation's root, a tuple of it).
std::optional<std::set<int64_t>> ReadAfter(const HloInstruction& loop) {
  if (loop.parent()->root() == &loop) return std::nullopt;
  std::set<int64_t> read;
  for (const HloInstruction* user : loop.users()) {
    if (!user->Is(HloOpcode::kGetTupleElement)) return std::nullopt;
    // XLA removes dead code before it simplifies loops: a read nothing
    // uses does not count.
    if (IsUsed(*user)) read.insert(Index(*user));
  }
  return read;
}

bool ReadsElement(const HloComputation& computation, int64_t k) {
  for (const HloInstruction* user : computation.parameters()[0]->users()) {
    if (user->Is(HloOpcode::kGetTupleElement) && Index(*user) == k && IsUsed(*user)) return true;
  }
  return false;
}

// Whether element `k` of the body's state flows, within one trip, into
// nothing but element `k` of its result: no other element, nothing with a
// side effect.
bool FeedsOnlyItself(const HloComputation& body, int64_t k) {
  const HloInstruction* root = body.root();
  std::vector<const HloInstruction*> work;
  std::set<const HloInstruction*> seen;
  for (const HloInstruction* user : body.parameters()[0]->users()) {
    if (user == root) return false;  // the state returned whole
    if (Index(*user) == k) work.push_back(user);
  }
  while (!work.empty()) {
    const HloInstruction* value = work.back();
    work.pop_back();
    if (!seen.insert(value).second) continue;
    if (HasSideEffect(*value)) return false;
    for (const HloInstruction* user : value->users()) {
      if (user != root) {
        work.push_back(user);
        continue;
      }
      for (int j = 0; j < root->operand_count(); ++j) {
        if (root->operand(j) == value && j != k) return false;
      }
    }
  }
  return true;
}

// Renumbers the reads of `state` (each a get-tuple-element) after the
// elements in `dead` are removed; reads of those, unused, are left for DCE.
void Renumber(HloInstruction* state, const std::set<int64_t>& dead) {
  for (HloInstruction* user : state->users()) {
    if (!user->Is(HloOpcode::kGetTupleElement)) continue;
    const int64_t index = Index(*user);
    if (dead.count(index)) continue;
    int64_t below = 0;
    for (int64_t d : dead) below += d < index;
    user->SetIntAttribute("index", index - below);
  }
}

// Rebuilds `tuple` (a tuple instruction, in place) without the operands in `dead`.
void DropOperands(HloInstruction* tuple, const std::set<int64_t>& dead) {
  std::vector<HloInstruction*> kept;
  std::vector<Shape> shapes;
  for (int i = 0; i < tuple->operand_count(); ++i) {
    if (dead.count(i)) continue;
    kept.push_back(tuple->operand(i));
    shapes.push_back(tuple->operand(i)->shape());
  }
  tuple->DetachOperands();
  for (HloInstruction* operand : kept) tuple->AppendOperand(operand);
  *tuple->mutable_shape() = Shape::Tuple(shapes);
}

std::set<int64_t> DeadElements(const HloInstruction& loop) {
  const HloComputation* body = loop.CalledComputation("body");
  const HloComputation* cond = loop.CalledComputation("condition");
  if (!FlatArrayState(loop) || body == nullptr || cond == nullptr || !body->root()->Is(HloOpcode::kTuple) ||
      loop.operand(0)->user_count() != 1 || !ReadByElement(*body) || !ReadByElement(*cond) ||
      cond->root() == cond->parameters()[0]) {
    return {};
  }
  const std::optional<std::set<int64_t>> read = ReadAfter(loop);
  const HloModule& module = *loop.parent()->parent();
  if (!read || module.CallerCount(body) != 1 || module.CallerCount(cond) != 1) return {};
  std::set<int64_t> dead;
  const int64_t n = static_cast<int64_t>(loop.shape().tuple_shapes().size());
  for (int64_t k = 0; k < n; ++k) {
    if (!read->count(k) && !ReadsElement(*cond, k) && FeedsOnlyItself(*body, k)) dead.insert(k);
  }
  return dead;
}

bool ShrinkLoop(HloInstruction* loop) {
  const std::set<int64_t> dead = DeadElements(*loop);
  if (dead.empty()) return false;
  HloComputation* body = loop->CalledComputation("body");
  HloComputation* cond = loop->CalledComputation("condition");
  DropOperands(body->root(), dead);
  RemoveDeadInstructions(body);  // the dead elements' reads and updates
  RemoveDeadInstructions(cond);
  DropOperands(loop->operand(0), dead);
  const Shape state = loop->operand(0)->shape();
  for (HloComputation* computation : {body, cond}) {
    HloInstruction* parameter = computation->parameters()[0];
    Renumber(parameter, dead);
    *parameter->mutable_shape() = state;
  }
  Renumber(loop, dead);
  *loop->mutable_shape() = state;
  RemoveDeadInstructions(loop->parent());  // the dead elements' initial values
  return true;
}

}  // namespace

bool DeadLoopElements::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> loops;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kWhile)) loops.push_back(instruction.get());
    }
    for (HloInstruction* loop : loops) changed = ShrinkLoop(loop) || changed;
  }
  return changed;
}

}  // namespace exla
