// Declarative matching of HLO expressions, in the style of XLA's
// pattern_matcher.h:
//
//   HloInstruction* x;
//   if (Match(h, m::Multiply(m::Op(&x), m::Broadcast(m::ConstantScalar())))) ...
//
// A pattern checks an instruction (opcode, shape, users, ...) and, when given
// one pattern per operand, its operands recursively. `m::Op(&x)` binds the
// instruction it matched. Bound pointers are meaningful only when Match
// returns true (a failed match may have written some of them).
//
// Passes state *what* they rewrite with these patterns rather than walking
// operands by hand, so that the expression a rewrite expects is readable in
// one line and a misspelt opcode is a compile error.
#ifndef EXLA_IR_PATTERN_MATCHER_H_
#define EXLA_IR_PATTERN_MATCHER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/instruction.h"

namespace exla {

// The value every element of `h` has when `h` is a literal of one element
// (any rank), possibly converted, reshaped or broadcast: the form frameworks
// give a scalar constant (TensorFlow wraps it in reshapes, JAX broadcasts
// it, mixed precision converts it). A convert to an integral type or pred
// changes the value as XLA would (truncation, non-zero is true). Nothing
// when `h` is no such literal or its text is not a number (true, false).
std::optional<double> SplatConstantValue(const HloInstruction* h);

namespace m {

// Matches one instruction: an optional opcode, predicates, and (if any were
// given) exactly one pattern per operand.
template <typename... Operands>
class InstructionPattern {
 public:
  explicit InstructionPattern(std::optional<HloOpcode> opcode, std::tuple<Operands...> operands,
                              HloInstruction** bind = nullptr)
      : opcode_(opcode), operands_(std::move(operands)), bind_(bind) {}

  bool Match(HloInstruction* h) const {
    if (h == nullptr) return false;
    if (opcode_.has_value() && !h->Is(*opcode_)) return false;
    if (sizeof...(Operands) > 0 && h->operand_count() != static_cast<int>(sizeof...(Operands))) {
      return false;
    }
    for (const auto& predicate : predicates_) {
      if (!predicate(h)) return false;
    }
    if (!MatchOperands(h, std::index_sequence_for<Operands...>())) return false;
    if (bind_ != nullptr) *bind_ = h;
    return true;
  }

  // Predicates; each returns a copy with the check added.
  InstructionPattern WithPredicate(std::function<bool(const HloInstruction*)> predicate) const {
    InstructionPattern copy = *this;
    copy.predicates_.push_back(std::move(predicate));
    return copy;
  }
  InstructionPattern WithOpcode(HloOpcode opcode) const {
    InstructionPattern copy = *this;
    copy.opcode_ = opcode;
    return copy;
  }
  InstructionPattern WithRank(int rank) const {
    return WithPredicate([rank](const HloInstruction* h) {
      return h->shape().IsArray() && h->shape().rank() == rank;
    });
  }
  InstructionPattern IsScalar() const { return WithRank(0); }
  InstructionPattern IsArray() const {
    return WithPredicate([](const HloInstruction* h) { return h->shape().IsArray(); });
  }
  InstructionPattern WithElementType(PrimitiveType type) const {
    return WithPredicate([type](const HloInstruction* h) {
      return h->shape().IsArray() && h->shape().element_type() == type;
    });
  }
  InstructionPattern WithOneUser() const {
    return WithPredicate([](const HloInstruction* h) { return h->user_count() == 1; });
  }
  // Binds the matched instruction to `*bind` (replacing an earlier binding).
  InstructionPattern Bind(HloInstruction** bind) const {
    InstructionPattern copy = *this;
    copy.bind_ = bind;
    return copy;
  }

 private:
  template <size_t... I>
  bool MatchOperands(HloInstruction* h, std::index_sequence<I...>) const {
    return (std::get<I>(operands_).Match(h->operand(static_cast<int>(I))) && ...);
  }

  std::optional<HloOpcode> opcode_;
  std::tuple<Operands...> operands_;
  HloInstruction** bind_;
  std::vector<std::function<bool(const HloInstruction*)>> predicates_;
};

// Any instruction, optionally bound.
inline InstructionPattern<> Op(HloInstruction** bind = nullptr) {
  return InstructionPattern<>(std::nullopt, std::tuple<>(), bind);
}

// An instruction with `opcode` and operands matching `operands...` (any
// operands when none are given).
template <typename... Operands>
InstructionPattern<Operands...> OpWithOpcode(HloOpcode opcode, Operands... operands) {
  return InstructionPattern<Operands...>(opcode, std::make_tuple(std::move(operands)...));
}

#define EXLA_PATTERN(Name, opcode)                                         \
  template <typename... Operands>                                          \
  InstructionPattern<Operands...> Name(Operands... operands) {             \
    return OpWithOpcode(HloOpcode::opcode, std::move(operands)...);        \
  }
EXLA_PATTERN(Abs, kAbs)
EXLA_PATTERN(Add, kAdd)
EXLA_PATTERN(Broadcast, kBroadcast)
EXLA_PATTERN(Compare, kCompare)
EXLA_PATTERN(Constant, kConstant)
EXLA_PATTERN(Convert, kConvert)
EXLA_PATTERN(Copy, kCopy)
EXLA_PATTERN(Divide, kDivide)
EXLA_PATTERN(Dot, kDot)
EXLA_PATTERN(DynamicSlice, kDynamicSlice)
EXLA_PATTERN(DynamicUpdateSlice, kDynamicUpdateSlice)
EXLA_PATTERN(Exp, kExp)
EXLA_PATTERN(GetTupleElement, kGetTupleElement)
EXLA_PATTERN(Iota, kIota)
EXLA_PATTERN(Maximum, kMaximum)
EXLA_PATTERN(Multiply, kMultiply)
EXLA_PATTERN(Negate, kNegate)
EXLA_PATTERN(Parameter, kParameter)
EXLA_PATTERN(Power, kPower)
EXLA_PATTERN(Reduce, kReduce)
EXLA_PATTERN(Reshape, kReshape)
EXLA_PATTERN(Select, kSelect)
EXLA_PATTERN(Subtract, kSubtract)
EXLA_PATTERN(Transpose, kTranspose)
EXLA_PATTERN(Tuple, kTuple)
EXLA_PATTERN(While, kWhile)
#undef EXLA_PATTERN

// A rank-0 constant.
inline InstructionPattern<> ConstantScalar(HloInstruction** bind = nullptr) {
  return Constant().IsScalar().Bind(bind);
}

// Either `first` or `second`, tried in that order.
template <typename First, typename Second>
class AnyOfPattern {
 public:
  AnyOfPattern(First first, Second second) : first_(std::move(first)), second_(std::move(second)) {}
  bool Match(HloInstruction* h) const { return first_.Match(h) || second_.Match(h); }

 private:
  First first_;
  Second second_;
};
template <typename First, typename Second>
AnyOfPattern<First, Second> AnyOf(First first, Second second) {
  return AnyOfPattern<First, Second>(std::move(first), std::move(second));
}

// A binary commutative instruction whose operands match `a` and `b` in either
// order: `AddAnyOrder(m::Op(&x), m::Broadcast())`.
template <typename A, typename B>
auto AddAnyOrder(A a, B b) {
  return AnyOf(Add(a, b), Add(b, a));
}
template <typename A, typename B>
auto MultiplyAnyOrder(A a, B b) {
  return AnyOf(Multiply(a, b), Multiply(b, a));
}

// Looks through instructions for which `skippable` holds (each is followed to
// its operand 0) and matches `inner` on the first one that is not skippable.
// Skipped instructions are appended to `*skipped` when it is given, even if
// `inner` then fails: callers that rewrite the matched expression also own
// what they looked through.
template <typename Inner>
class LookThroughPattern {
 public:
  LookThroughPattern(std::function<bool(const HloInstruction*)> skippable, Inner inner,
                     std::vector<HloInstruction*>* skipped)
      : skippable_(std::move(skippable)), inner_(std::move(inner)), skipped_(skipped) {}

  bool Match(HloInstruction* h) const {
    while (h != nullptr && h->operand_count() == 1 && skippable_(h)) {
      if (skipped_ != nullptr) skipped_->push_back(h);
      h = h->operand(0);
    }
    return inner_.Match(h);
  }

 private:
  std::function<bool(const HloInstruction*)> skippable_;
  Inner inner_;
  std::vector<HloInstruction*>* skipped_;
};

// Whether `h` leaves every value unchanged: a reshape or transpose that keeps
// the dimensions in place, or a convert that loses nothing (same type, or a
// wider floating-point type). TensorFlow wraps most ops in such instructions
// and mixed precision adds the converts.
bool IsNoOp(const HloInstruction* h);

// Whether `h` hands on its operand unchanged: a convert to its own type, or a
// reshape, bitcast, copy, slice or transpose that keeps every dimension and
// element in place. XLA's simplifier removes each of them. Unlike IsNoOp, a
// widening convert does not count (it writes a new buffer), and copies,
// bitcasts and whole-operand slices do.
bool MovesNoElement(const HloInstruction* h);

// Whether `h` is a reshape that only adds or drops dimensions of extent 1
// (JAX moves attention's scores through such reshapes around its
// grouped-query dimension): the other dimensions keep their extents and
// their order, and every element its place in them.
bool IsDegenerateReshape(const HloInstruction* h);

// `inner`, looking through no-op reshapes, transposes and converts (IsNoOp).
template <typename Inner>
LookThroughPattern<Inner> NoOps(Inner inner, std::vector<HloInstruction*>* skipped = nullptr) {
  return LookThroughPattern<Inner>(IsNoOp, std::move(inner), skipped);
}

}  // namespace m

// Whether `pattern` matches `instruction` (binding what it names).
template <typename Pattern>
bool Match(HloInstruction* instruction, const Pattern& pattern) {
  return pattern.Match(instruction);
}
// For read-only callers: the patterns never modify what they match.
template <typename Pattern>
bool Match(const HloInstruction* instruction, const Pattern& pattern) {
  return pattern.Match(const_cast<HloInstruction*>(instruction));
}

}  // namespace exla

#endif  // EXLA_IR_PATTERN_MATCHER_H_
