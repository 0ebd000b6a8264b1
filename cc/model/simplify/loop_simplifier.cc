#include "model/simplify/loop_simplifier.h"

#include "analysis/loop_state.h"
#include "ir/computation.h"

namespace exla {
namespace {

// How deep the comparison of two updates looks: counters' updates are a
// few instructions deep; a deeper match is left alone (the model then
// keeps both elements, erring high).
constexpr int kMaxDepth = 8;

// `value` without what XLA's simplifier removes: the views StripIdentity
// removes, and elements read out of a tuple built in place (an inlined
// call's result).
const HloInstruction* Stripped(const HloInstruction* value) {
  while (true) {
    value = StripIdentity(value);
    if (!value->Is(HloOpcode::kGetTupleElement) || !value->operand(0)->Is(HloOpcode::kTuple)) return value;
    const int64_t index = value->IntAttribute("index").value_or(-1);
    if (index < 0 || index >= value->operand(0)->operand_count()) return value;
    value = value->operand(0)->operand(static_cast<int>(index));
  }
}

int64_t ElementRead(const HloInstruction* value, const HloInstruction* parameter) {
  if (!value->Is(HloOpcode::kGetTupleElement) || value->operand(0) != parameter) return -1;
  return value->IntAttribute("index").value_or(-1);
}

bool SameAttributes(const HloInstruction& a, const HloInstruction& b) {
  if (a.attributes().size() != b.attributes().size()) return false;
  for (size_t i = 0; i < a.attributes().size(); ++i) {
    const HloAttribute& x = a.attributes()[i];
    const HloAttribute& y = b.attributes()[i];
    if (x.key == "metadata" && y.key == "metadata") continue;
    if (x.key != y.key || x.value != y.value || x.computations != y.computations) return false;
  }
  return true;
}

// Whether `a` computes for element `k` what `b` computes for element `m`:
// the same instructions over the same values, reading element k where b
// reads element m.
bool SameUpdate(const HloInstruction* a, const HloInstruction* b, int64_t k, int64_t m,
                const HloInstruction* parameter, int depth) {
  a = Stripped(a);
  b = Stripped(b);
  if (a == b) return true;
  const int64_t ia = ElementRead(a, parameter), ib = ElementRead(b, parameter);
  if (ia >= 0 || ib >= 0) return ia == ib || (ia == k && ib == m);
  if (depth >= kMaxDepth || a->opcode() != b->opcode() || !(a->shape() == b->shape()) ||
      a->operand_count() != b->operand_count() || a->payload() != b->payload() || !SameAttributes(*a, *b) ||
      a->Is(HloOpcode::kParameter) || a->HasSideEffectNoRecurse()) {
    return false;
  }
  for (int i = 0; i < a->operand_count(); ++i) {
    if (!SameUpdate(a->operand(i), b->operand(i), k, m, parameter, depth + 1)) return false;
  }
  return true;
}

bool FlatState(const HloInstruction& loop) {
  if (!FlatArrayState(loop)) return false;
  const HloComputation* body = loop.CalledComputation("body");
  return body != nullptr && body->root()->Is(HloOpcode::kTuple) && !body->parameters().empty() &&
         body->root()->operand_count() == static_cast<int>(loop.shape().tuple_shapes().size());
}

}  // namespace

std::vector<int> RepeatedLoopElements(const HloInstruction& loop) {
  if (!FlatState(loop)) return {};
  const HloInstruction& init = *loop.operand(0);
  const HloComputation& body = *loop.CalledComputation("body");
  const HloInstruction* parameter = body.parameters()[0];
  const int n = init.operand_count();
  std::vector<int> repeats(n, -1);
  for (int k = 0; k < n; ++k) {
    for (int m = 0; m < k && repeats[k] < 0; ++m) {
      if (repeats[m] >= 0 || Stripped(init.operand(k)) != Stripped(init.operand(m))) continue;
      if (SameUpdate(body.root()->operand(k), body.root()->operand(m), k, m, parameter, 0)) repeats[k] = m;
    }
  }
  return repeats;
}

int64_t RemovedLoopElements(const HloInstruction& loop) {
  const std::vector<int> repeats = RepeatedLoopElements(loop);
  if (repeats.empty()) return 0;
  const std::vector<bool> passes = PassThroughLeaves(*loop.CalledComputation("body"));
  int64_t removed = 0;
  for (size_t k = 0; k < repeats.size(); ++k) {
    const bool literal =
        k < passes.size() && passes[k] && Stripped(loop.operand(0)->operand(k))->Is(HloOpcode::kConstant);
    if (repeats[k] >= 0 || literal) ++removed;
  }
  return removed;
}

}  // namespace exla
