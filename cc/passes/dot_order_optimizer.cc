#include "passes/dot_order_optimizer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"
#include "pass/dce.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

using Dims = std::vector<int64_t>;

bool Contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// An instruction's result read as a (batched) matrix M[batch..., row, col].
// `batch` lists the instruction's dimensions in the chain's batch order; a
// vector has no row or no column (-1), which counts as size 1.
struct MatrixView {
  Dims batch;
  int64_t row = -1;
  int64_t col = -1;
};

MatrixView Transposed(MatrixView view) {
  std::swap(view.row, view.col);
  return view;
}

int64_t DimSize(const HloInstruction* h, int64_t dim) {
  return dim < 0 ? 1 : h->shape().dim(static_cast<int>(dim));
}

struct Factor {
  HloInstruction* value;
  MatrixView view;
  int64_t rows() const { return DimSize(value, view.row); }
  int64_t cols() const { return DimSize(value, view.col); }
};

// multiply/divide by a broadcast scalar, or negate, somewhere in the chain.
struct ScalarFactor {
  HloInstruction* scalar;  // rank 0; nullptr for negate
  HloOpcode opcode;        // kMultiply, kDivide or kNegate
};

// One dot of a chain: it multiplies factors [begin, split) by [split, end).
struct Split {
  size_t begin, split, end;
};

// The dimension of the result of a reshape that only inserts or deletes unit
// dimensions, per result dimension: the operand dimension it is, or -1 for an
// inserted unit dimension. nullopt for any other reshape.
std::optional<Dims> UnitReshapeMap(const HloInstruction* reshape) {
  const Dims& out = reshape->shape().dims();
  const Dims& in = reshape->operand(0)->shape().dims();
  Dims map(out.size(), -1);
  if (out == in) {
    for (size_t i = 0; i < out.size(); ++i) map[i] = static_cast<int64_t>(i);
    return map;
  }
  size_t j = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    while (j < in.size() && in[j] == 1) ++j;
    if (j == in.size() || in[j] != out[i]) return std::nullopt;
    map[i] = static_cast<int64_t>(j++);
  }
  while (j < in.size() && in[j] == 1) ++j;
  if (j != in.size()) return std::nullopt;
  return map;
}

// Maps a view of an instruction's result onto its operand through a
// dimension map (result dim -> operand dim, -1 if the result dim is a unit
// dimension the operand lacks).
std::optional<MatrixView> MapView(const MatrixView& view, const Dims& map) {
  MatrixView mapped;
  for (int64_t d : view.batch) {
    if (map[d] < 0) return std::nullopt;
    mapped.batch.push_back(map[d]);
  }
  mapped.row = view.row < 0 ? -1 : map[view.row];
  mapped.col = view.col < 0 ? -1 : map[view.col];
  return mapped;
}

// A dot the chain can pass through: one contracting dimension per side and
// at most one free dimension per side, all of the chain's element type.
bool IsChainDot(const HloInstruction* h, PrimitiveType type) {
  if (!Match(h, m::Dot(m::Op(), m::Op()).WithElementType(type))) return false;
  DotDimensions dd = h->dot_dimensions();
  if (dd.lhs_contracting.size() != 1 || dd.rhs_contracting.size() != 1) return false;
  for (int side = 0; side < 2; ++side) {
    const Shape& shape = h->operand(side)->shape();
    if (!shape.IsArray() || shape.IsDynamic() || shape.element_type() != type) return false;
    int free = shape.rank() - static_cast<int>(dd.lhs_batch.size()) - 1;
    if (free < 0 || free > 1) return false;
  }
  return true;
}

// The free (neither batch nor contracting) dimension of a dot operand, or -1.
int64_t FreeDimension(const Shape& shape, const Dims& batch, const Dims& contracting) {
  for (int i = 0; i < shape.rank(); ++i) {
    if (!Contains(batch, i) && !Contains(contracting, i)) return i;
  }
  return -1;
}

// Can the chain swallow `h`? Only if its single use is by the chain.
bool UsedOnlyByOneUser(const HloInstruction* h) {
  if (h->user_count() != 1 || h == h->parent()->root() || !h->control_successors().empty() ||
      !h->control_predecessors().empty()) {
    return false;
  }
  const auto& operands = h->users()[0]->operands();
  return std::count(operands.begin(), operands.end(), h) == 1;
}

// Flattens a tree of dots into its factors.
class ChainFlattener {
 public:
  explicit ChainFlattener(PrimitiveType type) : type_(type) {}

  // Flattens the tree rooted at `root`, read as M[batch, lhs free, rhs free].
  bool FlattenRoot(HloInstruction* root) {
    DotDimensions dd = root->dot_dimensions();
    MatrixView view;
    for (size_t i = 0; i < dd.lhs_batch.size(); ++i) view.batch.push_back(static_cast<int64_t>(i));
    int64_t next = static_cast<int64_t>(dd.lhs_batch.size());
    if (FreeDimension(root->operand(0)->shape(), dd.lhs_batch, dd.lhs_contracting) >= 0) {
      view.row = next++;
    }
    if (FreeDimension(root->operand(1)->shape(), dd.rhs_batch, dd.rhs_contracting) >= 0) {
      view.col = next;
    }
    return TryExpand(root, view, {});
  }

  std::vector<Factor> factors;
  std::vector<ScalarFactor> scalars;
  std::vector<Split> splits;
  std::vector<HloInstruction*> dots;

 private:
  void Flatten(HloInstruction* h, MatrixView view) {
    if (UsedOnlyByOneUser(h) && TryExpand(h, view, {})) return;
    // A leaf is read through transposes and unit reshapes: a dot takes its
    // operand dimensions in any order, while an explicit transpose feeding a
    // reordered dot may be materialised by XLA as a copy.
    while (true) {
      std::optional<MatrixView> mapped;
      if (h->Is(HloOpcode::kTranspose)) {
        mapped = MapView(view, h->dimensions());
      } else if (h->Is(HloOpcode::kReshape)) {
        std::optional<Dims> map = UnitReshapeMap(h);
        if (map.has_value()) mapped = MapView(view, *map);
        // Only if no dimension the view names disappears.
        if (mapped && ((view.row >= 0 && mapped->row < 0) || (view.col >= 0 && mapped->col < 0))) {
          mapped.reset();
        }
      }
      if (!mapped.has_value()) break;
      h = h->operand(0);
      view = *mapped;
    }
    factors.push_back({h, view});
  }

  // Expands `h` if it is a chain dot, possibly under transposes, unit
  // reshapes and scalar factors (collected in `pending` until a dot is found).
  bool TryExpand(HloInstruction* h, const MatrixView& view, std::vector<ScalarFactor> pending) {
    if (IsChainDot(h, type_)) return ExpandDot(h, view, pending);
    std::optional<MatrixView> mapped;
    HloInstruction* operand = h->operand_count() > 0 ? h->operand(0) : nullptr;
    if (h->Is(HloOpcode::kTranspose)) {
      mapped = MapView(view, h->dimensions());
    } else if (h->Is(HloOpcode::kReshape)) {
      std::optional<Dims> map = UnitReshapeMap(h);
      if (map.has_value()) mapped = MapView(view, *map);
    } else if (h->Is(HloOpcode::kNegate)) {
      mapped = view;
      pending.push_back({nullptr, HloOpcode::kNegate});
    } else if (h->Is(HloOpcode::kMultiply) || h->Is(HloOpcode::kDivide)) {
      for (int side = h->Is(HloOpcode::kDivide) ? 1 : 0; side < 2 && !mapped; ++side) {
        // A scalar broadcast into the chain's type commutes with the dots.
        HloInstruction* scalar = nullptr;
        if (Match(h->operand(side), m::Broadcast(m::Op(&scalar).IsScalar()).WithElementType(type_))) {
          pending.push_back({scalar, h->Is(HloOpcode::kDivide) ? HloOpcode::kDivide : HloOpcode::kMultiply});
          operand = h->operand(1 - side);
          mapped = view;
        }
      }
    }
    if (!mapped.has_value() || !UsedOnlyByOneUser(operand)) return false;
    return TryExpand(operand, *mapped, std::move(pending));
  }

  // view == lhs . rhs (or its transpose, rhs^T . lhs^T).
  bool ExpandDot(HloInstruction* dot, const MatrixView& view,
                 const std::vector<ScalarFactor>& pending) {
    DotDimensions dd = dot->dot_dimensions();
    const size_t nb = dd.lhs_batch.size();
    if (view.batch.size() != nb) return false;
    MatrixView lhs, rhs;
    for (int64_t p : view.batch) {
      if (p >= static_cast<int64_t>(nb)) return false;
      lhs.batch.push_back(dd.lhs_batch[p]);
      rhs.batch.push_back(dd.rhs_batch[p]);
    }
    lhs.row = FreeDimension(dot->operand(0)->shape(), dd.lhs_batch, dd.lhs_contracting);
    lhs.col = dd.lhs_contracting[0];
    rhs.row = dd.rhs_contracting[0];
    rhs.col = FreeDimension(dot->operand(1)->shape(), dd.rhs_batch, dd.rhs_contracting);
    int64_t result_row = lhs.row < 0 ? -1 : static_cast<int64_t>(nb);
    int64_t result_col = rhs.col < 0 ? -1 : static_cast<int64_t>(nb) + (lhs.row < 0 ? 0 : 1);
    // A view names a result dimension, or none when the dimension is absent
    // or has size 1.
    auto fits = [&](int64_t named, int64_t actual) {
      return named == actual || (named < 0 && (actual < 0 || DimSize(dot, actual) == 1));
    };
    bool transposed;
    if (fits(view.row, result_row) && fits(view.col, result_col)) {
      transposed = false;
    } else if (fits(view.row, result_col) && fits(view.col, result_row)) {
      transposed = true;
    } else {
      return false;
    }
    scalars.insert(scalars.end(), pending.begin(), pending.end());
    dots.push_back(dot);
    size_t begin = factors.size();
    if (!transposed) {
      Flatten(dot->operand(0), lhs);
      size_t split = factors.size();
      Flatten(dot->operand(1), rhs);
      splits.push_back({begin, split, factors.size()});
    } else {
      Flatten(dot->operand(1), Transposed(rhs));
      size_t split = factors.size();
      Flatten(dot->operand(0), Transposed(lhs));
      splits.push_back({begin, split, factors.size()});
    }
    return true;
  }

  PrimitiveType type_;
};

// Cost of an order: the largest intermediate (elements), then the flops.
struct Cost {
  int64_t largest = 0;
  double flops = 0;
};

bool Better(const Cost& a, const Cost& b) {
  if (a.largest != b.largest) return a.largest < b.largest;
  return a.flops < b.flops * (1 - 1e-9);
}

// Sizes of a chain: factor k is dims[k] x dims[k + 1], times `batch`.
struct ChainShape {
  Dims dims;
  int64_t batch = 1;
  int64_t Size(size_t i, size_t j) const { return batch * dims[i] * dims[j + 1]; }  // [i, j]
  double Flops(size_t i, size_t k, size_t j) const {  // [i, k] . [k + 1, j]
    return static_cast<double>(batch) * dims[i] * dims[k + 1] * dims[j + 1];
  }
};

Cost OriginalCost(const ChainShape& shape, const std::vector<Split>& splits, size_t n) {
  Cost cost;
  for (const Split& s : splits) {
    cost.flops += shape.Flops(s.begin, s.split - 1, s.end - 1);
    if (!(s.begin == 0 && s.end == n)) {
      cost.largest = std::max(cost.largest, shape.Size(s.begin, s.end - 1));
    }
  }
  return cost;
}

// Matrix-chain dynamic programming. First the smallest achievable largest
// intermediate (min-max composes over sub-chains), then the fewest flops
// among orders that respect that bound (a plain lexicographic DP would not
// be exact: a sub-chain's lexicographic optimum is not always part of the
// whole chain's). Fills split[i][j] with the last factor of the left part.
Cost BestOrder(const ChainShape& shape, size_t n, std::vector<std::vector<size_t>>* split) {
  const int64_t kNoSize = std::numeric_limits<int64_t>::max();
  const double kNoFlops = std::numeric_limits<double>::infinity();
  auto inner = [&](size_t i, size_t j) { return i == j ? 0 : shape.Size(i, j); };
  std::vector<std::vector<int64_t>> largest(n, std::vector<int64_t>(n, 0));
  for (size_t len = 2; len <= n; ++len) {
    for (size_t i = 0; i + len <= n; ++i) {
      size_t j = i + len - 1;
      largest[i][j] = kNoSize;
      for (size_t k = i; k < j; ++k) {
        int64_t m = std::max({largest[i][k], largest[k + 1][j], inner(i, k), inner(k + 1, j)});
        largest[i][j] = std::min(largest[i][j], m);
      }
    }
  }
  const int64_t bound = largest[0][n - 1];
  std::vector<std::vector<double>> flops(n, std::vector<double>(n, 0));
  split->assign(n, std::vector<size_t>(n, 0));
  for (size_t len = 2; len <= n; ++len) {
    for (size_t i = 0; i + len <= n; ++i) {
      size_t j = i + len - 1;
      flops[i][j] = kNoFlops;
      for (size_t k = i; k < j; ++k) {
        if (inner(i, k) > bound || inner(k + 1, j) > bound) continue;
        double f = flops[i][k] + flops[k + 1][j] + shape.Flops(i, k, j);
        if (f < flops[i][j]) {
          flops[i][j] = f;
          (*split)[i][j] = k;
        }
      }
    }
  }
  return {bound, flops[0][n - 1]};
}

// Emits the chain in the order `split` describes.
class ChainEmitter {
 public:
  ChainEmitter(HloComputation* computation, const std::vector<Factor>& factors,
               const std::vector<std::vector<size_t>>& split, const HloInstruction* root)
      : b_(computation), factors_(factors), split_(split), root_(root) {}

  Factor Emit(size_t i, size_t j) {
    if (i == j) return factors_[i];
    size_t k = split_[i][j];
    Factor lhs = Emit(i, k);
    Factor rhs = Emit(k + 1, j);
    DotDimensions dd;
    dd.lhs_batch = lhs.view.batch;
    dd.rhs_batch = rhs.view.batch;
    if (lhs.view.col >= 0) {  // both or neither side has it (checked before)
      dd.lhs_contracting = {lhs.view.col};
      dd.rhs_contracting = {rhs.view.row};
    }
    HloInstruction* dot = b_.Dot(lhs.value, rhs.value, dd);
    // Keep the precision configuration and source location of the chain.
    for (const char* key : {"operand_precision", "algorithm", "metadata"}) {
      if (std::optional<std::string> value = root_->RawAttribute(key)) dot->SetAttribute(key, *value);
    }
    Factor result{dot, {}};
    int64_t nb = static_cast<int64_t>(dd.lhs_batch.size());
    for (int64_t d = 0; d < nb; ++d) result.view.batch.push_back(d);
    result.view.row = lhs.view.row < 0 ? -1 : nb;
    result.view.col = rhs.view.col < 0 ? -1 : nb + (lhs.view.row < 0 ? 0 : 1);
    return result;
  }

  HloInstruction* ApplyScalars(HloInstruction* h, const std::vector<ScalarFactor>& scalars) {
    for (const ScalarFactor& s : scalars) {
      if (s.scalar == nullptr) {
        h = b_.Unary(HloOpcode::kNegate, h);
      } else {
        h = b_.Binary(s.opcode, h, b_.Broadcast(s.scalar, h->shape().dims(), {}));
      }
    }
    return h;
  }

  HloInstruction* ReshapeTo(HloInstruction* h, const Shape& shape) {
    return h->shape().dims() == shape.dims() ? h : b_.Reshape(h, shape.dims());
  }

 private:
  HloBuilder b_;
  const std::vector<Factor>& factors_;
  const std::vector<std::vector<size_t>>& split_;
  const HloInstruction* root_;
};


std::string Describe(const Cost& cost) {
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "largest intermediate %lld elements, %.3g flops",
                static_cast<long long>(cost.largest), 2 * cost.flops);
  return buffer;
}

}  // namespace

bool DotOrderOptimizer::Run(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    std::unordered_set<HloInstruction*> alive(order.begin(), order.end());
    std::unordered_set<HloInstruction*> absorbed;
    // Users before operands, so that each chain is first seen from its root.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* root = *it;
      if (!alive.count(root) || absorbed.count(root) || !root->Is(HloOpcode::kDot)) continue;
      if (!root->shape().IsArray() || !IsChainDot(root, root->shape().element_type())) continue;
      ChainFlattener chain(root->shape().element_type());
      if (!chain.FlattenRoot(root)) continue;
      absorbed.insert(chain.dots.begin(), chain.dots.end());
      const size_t n = chain.factors.size();
      if (n < 3) continue;  // a single dot has nothing to reorder

      ChainShape shape;
      bool consistent = true;
      shape.batch = chain.factors[0].value->shape().ExtentAlong(chain.factors[0].view.batch);
      for (size_t k = 0; k < n; ++k) {
        const Factor& f = chain.factors[k];
        shape.dims.push_back(f.rows());
        if (k + 1 < n) {
          const Factor& g = chain.factors[k + 1];
          // Adjacent factors must agree on whether the contracted dimension
          // exists; a vector times a 1 x m matrix would need a reshape.
          consistent &= f.cols() == g.rows() && (f.view.col < 0) == (g.view.row < 0);
        }
      }
      shape.dims.push_back(chain.factors[n - 1].cols());
      if (!consistent) continue;

      Cost original = OriginalCost(shape, chain.splits, n);
      std::vector<std::vector<size_t>> split;
      Cost best = BestOrder(shape, n, &split);
      if (!Better(best, original)) {
        Log("chain of " + std::to_string(n) + " factors at " + root->name() +
            " is already in the best order (" + Describe(original) + ")");
        continue;
      }
      Log("chain of " + std::to_string(n) + " factors at " + root->name() + " reordered: " +
          Describe(original) + " -> " + Describe(best));
      ChainEmitter emitter(computation.get(), chain.factors, split, root);
      HloInstruction* product = emitter.Emit(0, n - 1).value;
      product = emitter.ReshapeTo(emitter.ApplyScalars(product, chain.scalars), root->shape());
      root->ReplaceAllUsesWith(product);
      RemoveDeadChain(root, &alive);
      changed = true;
    }
  }
  return changed;
}

}  // namespace exla
