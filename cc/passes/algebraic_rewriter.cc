#include "passes/algebraic_rewriter.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"
#include "pass/dce.h"
#include "ir/pattern_matcher.h"
#include "passes/structured_literals.h"

namespace exla {
namespace {

using Dims = std::vector<int64_t>;

bool Contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t IndexOf(const Dims& v, int64_t x) {
  return static_cast<int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

// TensorFlow wraps nearly every op in no-op reshapes, identity transposes and
// same-type converts; JAX and mixed precision add widening converts. None of
// them changes a value, so the matchers look through them (m::NoOps). Every
// skipped instruction is appended to `skipped` (it dies with the rewritten
// chain).
HloInstruction* SkipNoOps(HloInstruction* h, std::vector<HloInstruction*>* skipped) {
  HloInstruction* value = nullptr;
  Match(h, m::NoOps(m::Op(&value), skipped));
  return value;
}

// `(x, y) -> add(x, y)`: the reducer of a sum.
bool IsAddComputation(const HloComputation* computation) {
  const HloInstruction* root = computation->root();
  HloInstruction *x = nullptr, *y = nullptr;
  return root != nullptr && computation->instruction_count() == 3 &&
         Match(root, m::Add(m::Parameter().Bind(&x), m::Parameter().Bind(&y))) && x != y;
}

// A constant equal to `value` everywhere (see SplatConstantValue).
m::InstructionPattern<> SplatConstant(double value) {
  return m::Op().WithPredicate([value](const HloInstruction* h) {
    std::optional<double> splat = SplatConstantValue(h);
    return splat.has_value() && *splat == value;
  });
}

// reduce(x, 0) with an add reducer over a floating-point array.
bool IsFloatSumReduction(const HloInstruction* h) {
  if (!h->Is(HloOpcode::kReduce) || h->operand_count() != 2 || !h->shape().IsArray()) return false;
  if (h->shape().IsDynamic() || h->operand(0)->shape().IsDynamic()) return false;
  if (FloatRung(h->shape().element_type()) == 0) return false;
  const HloComputation* reducer = h->CalledComputation("to_apply");
  if (reducer == nullptr || !IsAddComputation(reducer)) return false;
  std::optional<double> init = SplatConstantValue(h->operand(1));
  return init.has_value() && *init == 0.0;
}

// One operand of a big elementwise expression seen as `small` broadcast into
// the big shape: dimension i of `small` is dimension dims[i] of the big shape.
// An operand that is not a broadcast is its own small side (identity dims);
// the size test then rejects the rewrite, as nothing would shrink.
struct BroadcastSide {
  HloInstruction* small = nullptr;
  Dims dims;
};

BroadcastSide MatchBroadcastSide(HloInstruction* h, std::vector<HloInstruction*>* chain) {
  h = SkipNoOps(h, chain);
  HloInstruction* small = nullptr;
  if (Match(h, m::Broadcast(m::Op(&small)))) return {small, h->dimensions()};
  Dims identity(h->shape().rank());
  std::iota(identity.begin(), identity.end(), 0);
  return {h, identity};
}

// A factor multiplied into (or divided out of) the difference after the
// subtraction: `factor` broadcast along big dimensions `dims`.
struct Scale {
  HloInstruction* factor = nullptr;
  Dims dims;
  bool divide = false;
};

std::optional<Scale> MatchBroadcastFactor(HloInstruction* h, bool divide) {
  HloInstruction *broadcast = nullptr, *factor = nullptr;
  if (!Match(h, m::NoOps(m::Broadcast(m::Op(&factor)).Bind(&broadcast)))) return std::nullopt;
  return Scale{factor, broadcast->dimensions(), divide};
}

// Peels multiplications/divisions by broadcasts off `h`: ((d * s1) / s2) -> d
// with the scales recorded. Under a square the sign does not matter, so there
// (`sign_free`) negate and abs are peeled too.
HloInstruction* PeelScales(HloInstruction* h, bool sign_free, std::vector<HloInstruction*>* chain,
                           std::vector<Scale>* scales) {
  while (true) {
    h = SkipNoOps(h, chain);
    HloInstruction* unsigned_value = nullptr;
    if (sign_free &&
        Match(h, m::AnyOf(m::Negate(m::Op(&unsigned_value)), m::Abs(m::Op(&unsigned_value))))) {
      chain->push_back(h);
      h = unsigned_value;
      continue;
    }
    std::optional<Scale> scale;
    int kept = -1;
    if (h->Is(HloOpcode::kMultiply) && h->operand(0) != h->operand(1)) {
      if ((scale = MatchBroadcastFactor(h->operand(1), false))) {
        kept = 0;
      } else if ((scale = MatchBroadcastFactor(h->operand(0), false))) {
        kept = 1;
      }
    } else if (h->Is(HloOpcode::kDivide) && (scale = MatchBroadcastFactor(h->operand(1), true))) {
      kept = 0;
    }
    if (kept < 0) return h;
    chain->push_back(h);
    scales->push_back(*scale);
    h = h->operand(kept);
  }
}

// Can `h` be shown to have no negative element? Squares, exponentials,
// absolute values and non-negative constants, and products, quotients and
// sums of those (e.g. lengthscale**2).
bool IsProvablyNonNegative(const HloInstruction* h, int depth = 0) {
  if (depth > 8) return false;
  if (h->Is(HloOpcode::kConvert) || h->Is(HloOpcode::kReshape) || h->Is(HloOpcode::kBroadcast) || h->Is(HloOpcode::kTranspose)) {
    return IsProvablyNonNegative(h->operand(0), depth + 1);
  }
  if (h->Is(HloOpcode::kExp) || h->Is(HloOpcode::kAbs) || h->Is(HloOpcode::kSqrt)) return true;
  if (h->Is(HloOpcode::kMultiply) && h->operand(0) == h->operand(1)) return true;
  if (h->Is(HloOpcode::kPower)) {
    std::optional<double> exponent = SplatConstantValue(h->operand(1));
    return exponent.has_value() && *exponent == 2.0;
  }
  if (h->Is(HloOpcode::kMultiply) || h->Is(HloOpcode::kDivide) || h->Is(HloOpcode::kAdd) || h->Is(HloOpcode::kMaximum)) {
    return IsProvablyNonNegative(h->operand(0), depth + 1) &&
           IsProvablyNonNegative(h->operand(1), depth + 1);
  }
  std::optional<double> value = SplatConstantValue(h);
  return value.has_value() && *value >= 0;
}

// Is `h` the square of something? multiply(d, d) or power(d, 2).
HloInstruction* MatchSquareOperand(HloInstruction* h) {
  HloInstruction *d = nullptr, *same = nullptr;
  if (Match(h, m::Multiply(m::Op(&d), m::Op(&same))) && d == same) return d;
  if (Match(h, m::Power(m::Op(&d), SplatConstant(2.0)))) return d;
  return nullptr;
}

// The big tensor dies only if nothing outside the matched chain uses it.
bool ChainIsPrivate(const std::vector<HloInstruction*>& chain) {
  for (const HloInstruction* h : chain) {
    if (h->user_count() != 1 || h == h->parent()->root()) return false;
  }
  return true;
}

int64_t LargestBytes(const std::vector<HloInstruction*>& chain) {
  int64_t largest = 0;
  for (const HloInstruction* h : chain) largest = std::max(largest, h->shape().ByteSize());
  return largest;
}

int64_t BytesAs(const HloInstruction* h, PrimitiveType type) {
  return Shape::Array(type, h->shape().dims()).ByteSize();
}

// A rewrite must make the largest tensor at least this many times smaller.
// For a squared distance the factor is the feature dimension d. Below about
// 8 the original is as fast (XLA fuses the difference into the reduction,
// and a dot contracting 3 elements is no faster than that loop), more
// accurate (the expansion cancels when x ~ y: on a kNN with d = 3 in f32,
// 0.1% of the neighbours came out swapped) and one result-sized buffer
// smaller; tensor-splitter handles it just as well.
constexpr int64_t kMinShrinkFactor = 8;

// Position of big dimension `dim` in the reduce's result (the reduced
// dimensions removed).
int64_t ResultPosition(const Dims& reduced, int64_t dim) {
  int64_t before = 0;
  for (int64_t r : reduced) before += r < dim ? 1 : 0;
  return dim - before;
}

// The building blocks of the replacements.
// What TrySquaredDistance matched: sum_r w (s (x - y))^2 with x and y
// broadcast into the big shape, and the instructions the rewrite removes.
struct SquaredDistance {
  std::vector<HloInstruction*> chain;
  std::vector<Scale> weights;  // applied after the square
  std::vector<Scale> scales;   // applied to the difference
  BroadcastSide x, y;
};

std::optional<SquaredDistance> MatchSquaredDistance(HloInstruction* reduce) {
  SquaredDistance m;
  HloInstruction* square = PeelScales(reduce->operand(0), false, &m.chain, &m.weights);
  HloInstruction* difference = MatchSquareOperand(square);
  if (difference == nullptr) return std::nullopt;
  m.chain.push_back(square);
  difference = PeelScales(difference, true, &m.chain, &m.scales);
  if (!difference->Is(HloOpcode::kSubtract)) return std::nullopt;
  m.chain.push_back(difference);
  m.x = MatchBroadcastSide(difference->operand(0), &m.chain);
  m.y = MatchBroadcastSide(difference->operand(1), &m.chain);
  // The expansion needs both sides to vary along every reduced dimension
  // and every scale or weight to vary only along dimensions both sides have.
  auto shared = [&](int64_t d) { return Contains(m.x.dims, d) && Contains(m.y.dims, d); };
  const Dims reduced = reduce->dimensions();
  if (!std::all_of(reduced.begin(), reduced.end(), shared)) return std::nullopt;
  for (const std::vector<Scale>* list : {&m.scales, &m.weights}) {
    for (const Scale& s : *list) {
      if (!std::all_of(s.dims.begin(), s.dims.end(), shared)) return std::nullopt;
    }
  }
  if (FloatRung(m.x.small->shape().element_type()) == 0 ||
      FloatRung(m.y.small->shape().element_type()) == 0) {
    return std::nullopt;
  }
  return m;
}

class Emitter {
 public:
  Emitter(HloComputation* computation, PrimitiveType type, HloComputation* adder)
      : b_(computation), type_(type), adder_(adder) {}

  HloInstruction* ToType(HloInstruction* h) {
    return h->shape().element_type() == type_ ? h : b_.Convert(h, type_);
  }

  HloInstruction* Splat(double value, const Dims& dims) {
    HloInstruction* scalar = b_.ConstantScalar(type_, value);
    return dims.empty() ? scalar : b_.Broadcast(scalar, dims, {});
  }

  // Broadcasts `operand` into `dims` with operand dimension i at output
  // position positions[i]. XLA wants increasing broadcast dimensions, so the
  // operand is transposed first when they are not.
  HloInstruction* BroadcastInto(HloInstruction* operand, const Dims& dims, Dims positions) {
    Dims order(positions.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t i, int64_t j) { return positions[i] < positions[j]; });
    if (!IsIdentityPermutation(order)) {
      operand = b_.Transpose(operand, order);
      std::sort(positions.begin(), positions.end());
    }
    if (operand->shape().rank() == static_cast<int>(dims.size())) return operand;
    return b_.Broadcast(operand, dims, positions);
  }

  // small * broadcast(factor) (or /) with the factor's big dimensions mapped
  // onto the small operand's dimensions.
  HloInstruction* ApplyScale(HloInstruction* small, const BroadcastSide& side, const Scale& scale) {
    Dims positions;
    for (int64_t d : scale.dims) positions.push_back(IndexOf(side.dims, d));
    HloInstruction* factor = BroadcastInto(ToType(scale.factor), small->shape().dims(), positions);
    return b_.Binary(scale.divide ? HloOpcode::kDivide : HloOpcode::kMultiply, small, factor);
  }

  // Sums `h` (with big dimensions `big_dims`) over the ones in `reduced`;
  // `big_dims` is updated to the survivors.
  HloInstruction* SumOver(HloInstruction* h, const Dims& reduced, Dims* big_dims) {
    Dims local, kept;
    for (size_t i = 0; i < big_dims->size(); ++i) {
      if (Contains(reduced, (*big_dims)[i])) {
        local.push_back(static_cast<int64_t>(i));
      } else {
        kept.push_back((*big_dims)[i]);
      }
    }
    if (local.empty()) return h;
    *big_dims = kept;
    return b_.Reduce(h, b_.ConstantScalar(type_, 0), local, adder_);
  }

  // dot(a, c): big dimensions both have are contracted when in `reduced`,
  // batch dimensions otherwise. `result_dims` receives the big dimension of
  // every result dimension (batch, then a's free, then c's free).
  HloInstruction* DotOfSides(HloInstruction* a, const Dims& a_dims, HloInstruction* c,
                             const Dims& c_dims, const Dims& reduced, Dims* result_dims) {
    DotDimensions dd;
    result_dims->clear();
    Dims batch;
    for (size_t i = 0; i < a_dims.size(); ++i) {
      int64_t d = a_dims[i];
      if (!Contains(c_dims, d)) continue;
      if (Contains(reduced, d)) {
        dd.lhs_contracting.push_back(static_cast<int64_t>(i));
        dd.rhs_contracting.push_back(IndexOf(c_dims, d));
      } else {
        batch.push_back(d);
      }
    }
    std::sort(batch.begin(), batch.end());
    for (int64_t d : batch) {
      dd.lhs_batch.push_back(IndexOf(a_dims, d));
      dd.rhs_batch.push_back(IndexOf(c_dims, d));
      result_dims->push_back(d);
    }
    for (int64_t d : a_dims) {
      if (!Contains(c_dims, d)) result_dims->push_back(d);
    }
    for (int64_t d : c_dims) {
      if (!Contains(a_dims, d)) result_dims->push_back(d);
    }
    return b_.Dot(a, c, dd);
  }

  HloInstruction* PlaceInResult(HloInstruction* h, const Dims& big_dims, const Dims& reduced,
                                const Dims& result_dims) {
    Dims positions;
    for (int64_t d : big_dims) positions.push_back(ResultPosition(reduced, d));
    return BroadcastInto(h, result_dims, positions);
  }

  HloBuilder& builder() { return b_; }

 private:
  HloBuilder b_;
  PrimitiveType type_;
  HloComputation* adder_;
};


// |x|^2 + |y|^2 - 2 x.y for a matched squared distance, clamped at zero
// unless a weight may be negative.
HloInstruction* ExpandSquaredDistance(HloInstruction* reduce, const SquaredDistance& m) {
  Emitter e(reduce->parent(), reduce->shape().element_type(), reduce->CalledComputation("to_apply"));
  HloInstruction* xs = e.ToType(m.x.small);
  HloInstruction* ys = e.ToType(m.y.small);
  for (const Scale& s : m.scales) {
    xs = e.ApplyScale(xs, m.x, s);
    ys = e.ApplyScale(ys, m.y, s);
  }
  HloBuilder& b = e.builder();
  HloInstruction* xx = b.Binary(HloOpcode::kMultiply, xs, xs);
  HloInstruction* yy = b.Binary(HloOpcode::kMultiply, ys, ys);
  HloInstruction* xw = xs;
  bool non_negative = true;
  for (const Scale& w : m.weights) {
    xx = e.ApplyScale(xx, m.x, w);
    yy = e.ApplyScale(yy, m.y, w);
    xw = e.ApplyScale(xw, m.x, w);
    non_negative &= IsProvablyNonNegative(w.factor);
  }
  const Dims reduced = reduce->dimensions();
  const Dims& result_dims = reduce->shape().dims();
  Dims x_dims = m.x.dims, y_dims = m.y.dims, cross_dims;
  xx = e.SumOver(xx, reduced, &x_dims);
  yy = e.SumOver(yy, reduced, &y_dims);
  HloInstruction* xy = e.DotOfSides(xw, m.x.dims, ys, m.y.dims, reduced, &cross_dims);
  HloInstruction* norms = b.Binary(HloOpcode::kAdd, e.PlaceInResult(xx, x_dims, reduced, result_dims),
                                   e.PlaceInResult(yy, y_dims, reduced, result_dims));
  HloInstruction* twice = b.Binary(HloOpcode::kMultiply, e.Splat(2.0, result_dims),
                                   e.PlaceInResult(xy, cross_dims, reduced, result_dims));
  HloInstruction* distance = b.Binary(HloOpcode::kSubtract, norms, twice);
  // The original is a sum of non-negative terms; cancellation in the
  // expanded form can round a zero distance to a tiny negative number
  // (then sqrt would give NaN), so clamp. With weights of unknown sign the
  // original can be negative itself.
  if (!non_negative) return distance;
  return b.Binary(HloOpcode::kMaximum, distance, e.Splat(0.0, result_dims));
}

class Rewriter {
 public:
  Rewriter(int64_t threshold, bool fast_math, std::vector<std::string>* log)
      : threshold_(threshold), fast_math_(fast_math), log_(log) {}

  // sum_r w (s (x - y))^2 -> (w s^2 |x|^2) + (w s^2 |y|^2) - 2 (w s x).(s y),
  // where w (weights applied after the square) and s (scales applied before
  // it) vary only along dimensions both x and y have.
  HloInstruction* TrySquaredDistance(HloInstruction* reduce) {
    std::optional<SquaredDistance> match = MatchSquaredDistance(reduce);
    if (!match) return nullptr;
    PrimitiveType type = reduce->shape().element_type();
    if (!Worthwhile(reduce, match->chain, {match->x.small, match->y.small}, type,
                    "squared distance")) {
      return nullptr;
    }
    // |x|^2 + |y|^2 - 2 x.y subtracts numbers of size |x|^2 to get one of
    // size |x - y|^2: its relative error is about eps |x|^2 / |x - y|^2, so
    // close points lose most of their digits (a float32 kNN with d = 3 swaps
    // neighbours). tensor-splitter bounds the memory of the direct form just
    // as well; the expansion only buys speed (a matrix multiply), and only a
    // user who accepts the error asks for it.
    if (!fast_math_) {
      log_->push_back("squared distance at " + reduce->name() +
                      " left alone: the expansion |x|^2 + |y|^2 - 2 x.y loses digits where x "
                      "is close to y (relative error about eps |x|^2 / |x - y|^2); "
                      "fast_math=True (--exla_fast_math) allows it");
      return nullptr;
    }
    return ExpandSquaredDistance(reduce, *match);
  }

  // sum_r a * b over broadcasts a, b -> dot.
  HloInstruction* TryProductSum(HloInstruction* reduce) {
    std::vector<HloInstruction*> chain;
    HloInstruction* product = SkipNoOps(reduce->operand(0), &chain);
    if (!product->Is(HloOpcode::kMultiply)) return nullptr;
    chain.push_back(product);
    BroadcastSide a = MatchBroadcastSide(product->operand(0), &chain);
    BroadcastSide c = MatchBroadcastSide(product->operand(1), &chain);
    // Without a broadcast this is an ordinary elementwise product: there is
    // no big tensor to avoid.
    const int rank = product->shape().rank();
    if (a.small->shape().rank() == rank && c.small->shape().rank() == rank) return nullptr;
    const Dims reduced = reduce->dimensions();
    // A reduced dimension neither side has would need a multiplication by
    // its size; rare enough not to bother.
    for (int64_t r : reduced) {
      if (!Contains(a.dims, r) && !Contains(c.dims, r)) return nullptr;
    }
    PrimitiveType type = reduce->shape().element_type();
    if (FloatRung(a.small->shape().element_type()) == 0 ||
        FloatRung(c.small->shape().element_type()) == 0) {
      return nullptr;
    }
    if (!Worthwhile(reduce, chain, {a.small, c.small}, type, "sum of products")) return nullptr;

    Emitter e(reduce->parent(), type, reduce->CalledComputation("to_apply"));
    // A reduced dimension only one side has is summed on that side first:
    // sum_r a[r] * c = (sum_r a[r]) * c.
    Dims a_only, c_only;
    for (int64_t r : reduced) {
      if (!Contains(c.dims, r)) a_only.push_back(r);
      if (!Contains(a.dims, r)) c_only.push_back(r);
    }
    Dims a_dims = a.dims, c_dims = c.dims, dot_dims;
    HloInstruction* as = e.SumOver(e.ToType(a.small), a_only, &a_dims);
    HloInstruction* cs = e.SumOver(e.ToType(c.small), c_only, &c_dims);
    HloInstruction* dot = e.DotOfSides(as, a_dims, cs, c_dims, reduced, &dot_dims);
    return e.PlaceInResult(dot, dot_dims, reduced, reduce->shape().dims());
  }

 private:
  // The rewrite must remove a tensor larger than anything it touches.
  bool Worthwhile(HloInstruction* reduce, const std::vector<HloInstruction*>& chain,
                  const std::vector<HloInstruction*>& inputs, PrimitiveType type,
                  const char* what) {
    int64_t removed = LargestBytes(chain);
    int64_t kept = reduce->shape().ByteSize();
    for (const HloInstruction* input : inputs) kept = std::max(kept, BytesAs(input, type));
    if (removed < kMinShrinkFactor * kept) {
      log_->push_back(std::string(what) + " at " + reduce->name() + " left alone: it removes " +
                      HumanBytes(removed) + " but needs " + HumanBytes(kept) + " (less than " +
                      std::to_string(kMinShrinkFactor) + "x smaller)");
      return false;
    }
    // A program whose tensors all fit is left exactly as it was: XLA fuses
    // these chains into their reduction when the reduced dimension is small,
    // and then the dot form needs one extra result-sized buffer.
    if (threshold_ > 0 && removed <= threshold_) {
      log_->push_back(std::string(what) + " at " + reduce->name() + " left alone: " +
                      HumanBytes(removed) + " is within the size threshold");
      return false;
    }
    if (!ChainIsPrivate(chain)) {
      log_->push_back(std::string(what) + " at " + reduce->name() +
                      " left alone: its intermediates have other users");
      return false;
    }
    return true;
  }

  int64_t threshold_;
  bool fast_math_;
  std::vector<std::string>* log_;
};

}  // namespace

// Large structured constants first: they are rebuilt whatever the
// threshold (see structured_literals.h), and above it in any case, since a
// literal above the threshold is a tensor above it outside any loop.
bool AlgebraicRewriter::RebuildStructuredLiterals(HloComputation* computation,
                                                  std::vector<std::string>* log) {
  const int64_t min_bytes = tensor_size_threshold_ > 0
                                ? std::min(tensor_size_threshold_, kStructuredLiteralMinBytes)
                                : kStructuredLiteralMinBytes;
  std::vector<HloInstruction*> constants;
  for (const auto& h : computation->instructions()) {
    if (Match(h.get(), m::Constant().IsArray())) constants.push_back(h.get());
  }
  bool changed = false;
  for (HloInstruction* constant : constants) {
    changed |= RebuildStructuredLiteral(constant, min_bytes, log) != nullptr;
  }
  return changed;
}

bool AlgebraicRewriter::Run(HloModule* module) {
  bool changed = false;
  std::vector<std::string> log;
  Rewriter rewriter(tensor_size_threshold_, fast_math_, &log);
  for (const auto& computation : module->computations()) {
    changed |= RebuildStructuredLiterals(computation.get(), &log);
    std::vector<HloInstruction*> reduces;
    std::unordered_set<HloInstruction*> alive;
    for (const auto& h : computation->instructions()) {
      alive.insert(h.get());
      if (IsFloatSumReduction(h.get())) reduces.push_back(h.get());
    }
    for (HloInstruction* reduce : reduces) {
      if (!alive.count(reduce)) continue;
      HloInstruction* replacement = rewriter.TrySquaredDistance(reduce);
      if (replacement == nullptr) replacement = rewriter.TryProductSum(reduce);
      if (replacement == nullptr) continue;
      reduce->ReplaceAllUsesWith(replacement);
      RemoveDeadChain(reduce, &alive);
      changed = true;
    }
  }
  for (std::string& line : log) Log(std::move(line));
  return changed;
}

}  // namespace exla
