#include "passes/tensor_splitter/product_row_sums.h"

#include <algorithm>
#include <numeric>

#include "analysis/dimension_map.h"
#include "ir/builder.h"
#include "ir/pattern_matcher.h"
#include "pass/why_not.h"

namespace exla {
namespace {

int64_t LastDim(const HloInstruction* h) { return h->shape().rank() - 1; }

// A broadcast that is constant along the last dimension of its result (a
// per-row value): none of its operand's dimensions becomes the last. Its
// dimensions in order, so that the same broadcast onto the rows is valid.
bool IsRowBroadcast(const HloInstruction* h) {
  if (!h->Is(HloOpcode::kBroadcast) || !h->shape().IsArray() || h->shape().rank() < 2) return false;
  const std::vector<int64_t>& dims = h->dimensions();
  return std::find(dims.begin(), dims.end(), LastDim(h)) == dims.end() &&
         std::is_sorted(dims.begin(), dims.end());
}

// An elementwise product, factor by factor: the factors that vary along the
// last dimension, and the per-row broadcasts it multiplies and divides by.
// Same-type converts and reshapes that keep the dimensions are looked
// through; a convert to another type is a factor of its own (its product was
// rounded in that type).
struct Factors {
  std::vector<HloInstruction*> varying;
  std::vector<HloInstruction*> multipliers;
  std::vector<HloInstruction*> divisors;
};

void CollectFactors(HloInstruction* h, Factors* factors) {
  HloInstruction* a = nullptr;
  HloInstruction* b = nullptr;
  if (Match(h, m::Multiply(m::Op(&a), m::Op(&b)))) {
    CollectFactors(a, factors);
    CollectFactors(b, factors);
  } else if (Match(h, m::Divide(m::Op(&a),
                                m::Broadcast().WithPredicate(IsRowBroadcast).Bind(&b)))) {
    CollectFactors(a, factors);
    factors->divisors.push_back(b);
  } else if (IsRowBroadcast(h)) {
    factors->multipliers.push_back(h);
  } else if (m::IsNoOp(h) && h->operand(0)->shape().element_type() == h->shape().element_type()) {
    CollectFactors(h->operand(0), factors);
  } else {
    factors->varying.push_back(h);
  }
}

// The dimensions of extent other than 1, in order.
std::vector<int64_t> NonUnitDims(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(static_cast<int>(d)) != 1) dims.push_back(d);
  }
  return dims;
}

// The matrix product a factor reads, behind converts that lose nothing and
// degenerate reshapes; nullptr if the factor is none.
HloInstruction* ScoresBehind(HloInstruction* h) {
  while (m::IsNoOp(h) || m::IsDegenerateReshape(h)) h = h->operand(0);
  return h->Is(HloOpcode::kDot) ? h : nullptr;
}

// One row sum the rule rewrites, as matched.
struct ProductRowSum {
  HloInstruction* sum = nullptr;       // R = reduce add over j of X
  HloInstruction* scores = nullptr;    // D = dot(A, B), B on the right
  HloInstruction* weighted = nullptr;  // O = dot(P', B) or dot(B, P')
  int weights_operand = 0;             // P's operand number in O
  Factors product;                     // X's factors
  Factors weights;                     // P's factors
};

// R: a sum over the last dimension of a product with one matrix product D.
WhyNot MatchRowSum(HloInstruction* sum, ProductRowSum* found) {
  HloInstruction* x = sum->operand(0);
  CollectFactors(x, &found->product);
  const std::vector<HloInstruction*>& varying = found->product.varying;
  for (HloInstruction* factor : varying) {
    if (HloInstruction* scores = ScoresBehind(factor)) found->scores = scores;
  }
  if (found->scores == nullptr) return WhyNot::Because("no factor is a matrix product");
  if (x->shape().dims().back() < 2) return WhyNot::Because("the sum runs over one element");
  if (varying.size() != 2) {
    return WhyNot::Because("the product has " + std::to_string(varying.size()) +
                           " factors that vary along the sum, not a matrix product and weights");
  }
  const HloInstruction* d = found->scores;
  const DotDimensions dims = d->dot_dimensions();
  const size_t b_free = static_cast<size_t>(d->operand(1)->shape().rank()) -
                        dims.rhs_batch.size() - dims.rhs_contracting.size();
  if (b_free != 1 || d->shape().dims().back() != x->shape().dims().back()) {
    return WhyNot::Because(d->name() + " does not end in one dimension of its right operand that "
                           "the sum runs over");
  }
  return WhyNot::Ok();
}

// B's dimension that D leaves free (the one the row sum runs over).
int64_t FreeDimOfValues(const HloInstruction& scores) {
  const DotDimensions dims = scores.dot_dimensions();
  for (int64_t b = 0; b < scores.operand(1)->shape().rank(); ++b) {
    if (std::count(dims.rhs_batch.begin(), dims.rhs_batch.end(), b) == 0 &&
        std::count(dims.rhs_contracting.begin(), dims.rhs_contracting.end(), b) == 0) {
      return b;
    }
  }
  return -1;
}

// O: a product of the same B with weights P (the other varying factor of
// the row sum's product), over B's dimension j.
bool MatchesWeightedSum(HloInstruction* o, ProductRowSum* found) {
  HloInstruction* values = found->scores->operand(1);
  if (!o->Is(HloOpcode::kDot) || o == found->scores || o->operand_count() != 2) return false;
  const int k = o->operand(0) == values ? 1 : 0;
  if (o->operand(1 - k) != values || o->operand(k) == values) return false;
  const DotDimensions dims = o->dot_dimensions();
  HloInstruction* weights = o->operand(k);
  // O holds the rows and B's dimensions that D contracts, nothing else: B's
  // other dimensions are batch dimensions in O as in D.
  const size_t rank = static_cast<size_t>(weights->shape().rank()) - 1 +
                      found->scores->dot_dimensions().rhs_contracting.size();
  if (weights->shape().dims() != found->sum->operand(0)->shape().dims() ||
      dims.contracting(k) != std::vector<int64_t>{LastDim(weights)} ||
      dims.contracting(1 - k) != std::vector<int64_t>{FreeDimOfValues(*found->scores)} ||
      static_cast<size_t>(o->shape().rank()) != rank) {
    return false;
  }
  // P' = P, or P converted (bf16 attention converts its probabilities).
  if (weights->Is(HloOpcode::kConvert)) weights = weights->operand(0);
  Factors factors;
  CollectFactors(weights, &factors);
  const std::vector<HloInstruction*>& product = found->product.varying;
  if (factors.varying.size() != 1 ||
      std::find(product.begin(), product.end(), factors.varying[0]) == product.end() ||
      ScoresBehind(factors.varying[0]) == found->scores) {
    return false;
  }
  found->weighted = o;
  found->weights_operand = k;
  found->weights = std::move(factors);
  return true;
}

// B's batch dimensions must index the same rows in D and in O: D's batch
// dimension i (through the degenerate reshapes, the product's dimension x)
// and the weights' dimension O pairs with the same dimension of B are x.
bool SameRows(const ProductRowSum& found) {
  const HloInstruction* d = found.scores;
  const Shape& product = found.sum->operand(0)->shape();
  std::vector<int64_t> d_rows = NonUnitDims(d->shape());
  std::vector<int64_t> x_rows = NonUnitDims(product);
  d_rows.pop_back();  // j, the last dimension of both
  x_rows.pop_back();
  const DotDimensions d_dims = d->dot_dimensions();
  const DotDimensions o_dims = found.weighted->dot_dimensions();
  const int k = found.weights_operand;
  const std::vector<int64_t>& o_weights_batch = o_dims.batch(k);
  const std::vector<int64_t>& o_values_batch = o_dims.batch(1 - k);
  for (size_t i = 0; i < d_dims.rhs_batch.size(); ++i) {
    if (d->shape().dim(static_cast<int>(i)) == 1) continue;
    const auto row = std::find(d_rows.begin(), d_rows.end(), static_cast<int64_t>(i));
    const auto in_o = std::find(o_values_batch.begin(), o_values_batch.end(), d_dims.rhs_batch[i]);
    if (row == d_rows.end() || in_o == o_values_batch.end() ||
        o_weights_batch[in_o - o_values_batch.begin()] != x_rows[row - d_rows.begin()]) {
      return false;
    }
  }
  return true;
}

WhyNot MatchProductRowSum(HloInstruction* sum, ProductRowSum* found) {
  found->sum = sum;
  WhyNot why = MatchRowSum(sum, found);
  if (!why.ok()) return why;
  HloInstruction* values = found->scores->operand(1);
  for (HloInstruction* user : values->users()) {
    if (MatchesWeightedSum(user, found)) break;
  }
  if (found->weighted == nullptr) {
    return WhyNot::Because("the program computes no product of the same weights with " +
                           values->name() + " over the dimension the sum runs over");
  }
  const int precision = FloatRung(found->scores->shape().element_type());
  const HloInstruction* weights = found->weighted->operand(found->weights_operand);
  if (FloatRung(found->weighted->shape().element_type()) < precision ||
      FloatRung(weights->shape().element_type()) < precision) {
    return WhyNot::Because(found->weighted->name() + " is stored less precisely than " +
                           found->scores->name());
  }
  if (!SameRows(*found)) {
    return WhyNot::Because(found->weighted->name() + " and " + found->scores->name() +
                           " pair the batch dimensions of " + values->name() + " with other rows");
  }
  if (DependsOn(found->weighted, {sum})) {
    return WhyNot::Because(found->weighted->name() + " is computed from the sum");
  }
  return WhyNot::Ok();
}

// The candidates: reduces that add over the last dimension only, of a
// floating-point operand larger than the threshold.
bool IsRowSumOver(const HloInstruction* h, int64_t threshold) {
  if (!h->Is(HloOpcode::kReduce) || h->operand_count() != 2 || !h->shape().IsArray()) return false;
  const Shape& operand = h->operand(0)->shape();
  return operand.IsArray() && operand.rank() >= 2 && IsFloatingPointType(operand.element_type()) &&
         h->dimensions() == std::vector<int64_t>{operand.rank() - 1} &&
         AccumulationOpcode(*h) == HloOpcode::kAdd && operand.ByteSize() > threshold;
}

HloInstruction* ConvertTo(HloBuilder& b, HloInstruction* h, PrimitiveType type) {
  return h->shape().element_type() == type ? h : b.Convert(h, type);
}

HloInstruction* Transposed(HloBuilder& b, HloInstruction* h, const std::vector<int64_t>& order) {
  std::vector<int64_t> identity(order.size());
  std::iota(identity.begin(), identity.end(), 0);
  return order == identity ? h : b.Transpose(h, order);
}

// Σ_d A_id · O_id, with the rows i in the product's order: A in D's row
// order (batch, free) then its contracted dimensions, reshaped to the
// product's rows (the degenerate reshapes keep the order of the elements);
// O in the product's row order, then B's dimensions in D's contraction order.
HloInstruction* RowProducts(HloBuilder& b, const ProductRowSum& found) {
  const HloInstruction* d = found.scores;
  const DotDimensions dims = d->dot_dimensions();
  HloInstruction* a = d->operand(0);
  std::vector<int64_t> a_order = dims.lhs_batch;
  for (int64_t i = 0; i < a->shape().rank(); ++i) {
    if (std::count(dims.lhs_batch.begin(), dims.lhs_batch.end(), i) == 0 &&
        std::count(dims.lhs_contracting.begin(), dims.lhs_contracting.end(), i) == 0) {
      a_order.push_back(i);
    }
  }
  a_order.insert(a_order.end(), dims.lhs_contracting.begin(), dims.lhs_contracting.end());
  std::vector<int64_t> rows = found.sum->shape().dims();
  std::vector<int64_t> shape = rows;
  for (int64_t c : dims.lhs_contracting) shape.push_back(a->shape().dim(static_cast<int>(c)));
  HloInstruction* a_rows = b.Reshape(Transposed(b, a, a_order), shape);

  HloInstruction* o = found.weighted;
  const int k = found.weights_operand;
  std::vector<int64_t> o_order;
  for (int64_t x = 0; x < static_cast<int64_t>(rows.size()); ++x) {
    o_order.push_back(ResultDimension(*o, k, x).dimension());
  }
  for (int64_t c : dims.rhs_contracting) {
    o_order.push_back(ResultDimension(*o, 1 - k, c).dimension());
  }
  HloInstruction* o_rows = Transposed(b, o, o_order);

  const PrimitiveType type = found.sum->shape().element_type();
  HloInstruction* product =
      b.Binary(HloOpcode::kMultiply, ConvertTo(b, a_rows, type), ConvertTo(b, o_rows, type));
  std::vector<int64_t> contracted(dims.lhs_contracting.size());
  std::iota(contracted.begin(), contracted.end(), static_cast<int64_t>(rows.size()));
  return b.Reduce(product, b.ConstantScalar(type, 0), contracted,
                  found.sum->CalledComputation("to_apply"));
}

// The per-row value a row broadcast spreads, on the rows.
HloInstruction* OnRows(HloBuilder& b, HloInstruction* broadcast, const ProductRowSum& found) {
  HloInstruction* row = b.Broadcast(broadcast->operand(0), found.sum->shape().dims(),
                                    broadcast->dimensions());
  return ConvertTo(b, row, found.sum->shape().element_type());
}

// Removes the factors `a` and `b` share (TensorFlow's softmax divides both
// the product and the weights by the same sum): ρ / σ is then computed
// without them, two roundings fewer.
void Cancel(std::vector<HloInstruction*>* a, std::vector<HloInstruction*>* b) {
  for (auto it = a->begin(); it != a->end();) {
    auto same = std::find(b->begin(), b->end(), *it);
    if (same == b->end()) {
      ++it;
      continue;
    }
    b->erase(same);
    it = a->erase(it);
  }
}

void Rewrite(ProductRowSum found) {
  Cancel(&found.product.multipliers, &found.weights.multipliers);
  Cancel(&found.product.divisors, &found.weights.divisors);
  HloBuilder b(found.sum->parent());
  HloInstruction* result = RowProducts(b, found);
  auto apply = [&](const std::vector<HloInstruction*>& factors, HloOpcode opcode) {
    for (HloInstruction* factor : factors) {
      result = b.Binary(opcode, result, OnRows(b, factor, found));
    }
  };
  // ρ: the product's per-row factors; 1/σ: the inverse of the weights'.
  apply(found.product.multipliers, HloOpcode::kMultiply);
  apply(found.product.divisors, HloOpcode::kDivide);
  apply(found.weights.divisors, HloOpcode::kMultiply);
  apply(found.weights.multipliers, HloOpcode::kDivide);
  found.sum->ReplaceAllUsesWith(result);
}

}  // namespace

bool RewriteProductRowSums(HloComputation* computation, int64_t threshold,
                           std::vector<std::string>* notes) {
  bool changed = false;
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (!IsRowSumOver(instruction, threshold)) continue;
    ProductRowSum found;
    WhyNot why = MatchProductRowSum(instruction, &found);
    if (why.ok()) {
      Rewrite(found);
      changed = true;
    } else if (found.scores != nullptr) {
      // A row sum of a product with a matrix product: the user may expect it.
      notes->push_back("kept the row sum " + instruction->name() + " over the scores " +
                       found.scores->name() + ": " + why.reason());
    }
  }
  return changed;
}

}  // namespace exla
