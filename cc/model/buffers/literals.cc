#include "model/buffers/literals.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/loop_state.h"
#include "model/fusion/instruction_fusion.h"

namespace exla {
namespace {

// Whether XLA's fusion puts `instruction` into a fusion: it is folded into
// a reader, or it folds in an operand other than a literal.
bool InFusion(const HloInstruction& instruction, const std::function<bool(const HloInstruction&)>& folded) {
  if (folded(instruction)) return true;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->Is(HloOpcode::kConstant) && folded(*operand)) return true;
  }
  return false;
}

// Bytes of the copies of literals XLA's expansions of the triangular solves
// of `computation` keep. XLA expands every solve of one signature (shapes
// and options) into calls of one computation; a computation called from
// one place is inlined, but one called from several stays a call, cloned
// for each caller, and a literal right-hand side (the identity a framework
// solves against to invert a matrix) moves into each clone: every such
// solve keeps a copy of the literal beside the one the caller keeps.
int64_t SolveExpansionLiteralBytes(const HloComputation& computation) {
  std::map<std::string, std::vector<const HloInstruction*>> by_signature;
  for (const auto& instruction : computation.instructions()) {
    if (!instruction->Is(HloOpcode::kTriangularSolve) || instruction->operand_count() != 2) continue;
    std::string signature = instruction->operand(0)->shape().ToString(false) + instruction->shape().ToString(false);
    for (const HloAttribute& attribute : instruction->attributes()) {
      if (attribute.key != "metadata") signature += ',' + attribute.key + '=' + attribute.value;
    }
    by_signature[signature].push_back(instruction.get());
  }
  int64_t bytes = 0;
  for (const auto& [signature, solves] : by_signature) {
    if (solves.size() < 2) continue;
    for (const HloInstruction* solve : solves) {
      const HloInstruction* rhs = solve->operand(1);
      if (rhs->Is(HloOpcode::kConstant) && rhs->shape().IsArray()) bytes += rhs->shape().ByteSize();
    }
  }
  return bytes;
}

// Bytes of the literals XLA's while loop constant sinking moves into the
// body of the loop `loop`: an element of the state that the body returns
// unchanged and that a literal initialises is replaced, in the body, by a
// copy of that literal (a literal of the body's computation, kept like
// any array literal), and dropped from the state. A loop over a flat state
// has its literals sunk by the simplification already
// (simplify/loop_constant_sinking.h): they are literals of its body.
int64_t SunkLiteralBytes(const HloInstruction& loop) {
  const HloComputation* body = loop.CalledComputation("body");
  if (!loop.Is(HloOpcode::kWhile) || body == nullptr || FlatArrayState(loop)) return 0;
  const std::vector<bool> passes = PassThroughLeaves(*body);
  const std::vector<const HloInstruction*> sources = InitialLeaves(*loop.operand(0));
  int64_t bytes = 0;
  std::set<const HloInstruction*> sunk;
  for (size_t k = 0; k < passes.size() && k < sources.size(); ++k) {
    const HloInstruction* literal = sources[k];
    if (!passes[k] || literal == nullptr || !literal->Is(HloOpcode::kConstant) || literal->shape().rank() == 0 ||
        !sunk.insert(literal).second) {
      continue;
    }
    bytes += literal->shape().ByteSize();
  }
  return bytes;
}

// Whether the literal `c` is read only as elements of loops' initial
// states that the loops' bodies return unchanged: sunk into every body,
// the caller's copy is dead.
bool OnlySunk(const HloInstruction& c) {
  for (const HloInstruction* tuple : c.users()) {
    if (!tuple->Is(HloOpcode::kTuple) || tuple->users().empty()) return false;
    for (const HloInstruction* loop : tuple->users()) {
      const HloComputation* body = loop->CalledComputation("body");
      if (!loop->Is(HloOpcode::kWhile) || loop->operand(0) != tuple || body == nullptr) return false;
      const std::vector<bool> passes = PassThroughLeaves(*body);
      const std::vector<const HloInstruction*> sources = InitialLeaves(*tuple);
      for (size_t k = 0; k < sources.size(); ++k) {
        if (sources[k] == &c && (k >= passes.size() || !passes[k])) return false;
      }
    }
  }
  return true;
}

}  // namespace

int64_t KeptLiteralBytes(const std::vector<const HloComputation*>& computations,
                         const std::function<bool(const HloInstruction&)>& folded) {
  int64_t bytes = 0;
  std::set<std::pair<const HloComputation*, std::string>> seen;
  for (const HloComputation* computation : computations) {
    bytes += SolveExpansionLiteralBytes(*computation);
    for (const auto& owned : computation->instructions()) {
      const HloInstruction& c = *owned;
      bytes += SunkLiteralBytes(c);
      if (!c.Is(HloOpcode::kConstant) || !c.shape().IsArray() || c.users().empty() || OnlySunk(c)) continue;
      bool kept = c.shape().rank() > 0;
      for (const HloInstruction* user : c.users()) {
        kept = kept || !FusesProducers(*user) || !InFusion(*user, folded);
      }
      const bool first = seen.insert({computation, c.shape().ToString(false) + " " + c.payload()}).second;
      if (kept && first) bytes += c.shape().ByteSize();
    }
  }
  return bytes;
}

}  // namespace exla
