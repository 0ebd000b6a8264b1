#include "passes/structured_literals.h"

#include <optional>
#include <string_view>

#include "ir/builder.h"
#include "ir/literal_text.h"
#include "ir/pattern_matcher.h"

namespace exla {
namespace {

using Values = std::vector<std::string_view>;

bool AllEqual(const Values& values, std::string_view value) {
  for (std::string_view v : values) {
    if (v != value) return false;
  }
  return true;
}

// A matrix that is `off` everywhere but on its diagonal.
struct Diagonal {
  Values diagonal;  // min(rows, columns) values
  std::string_view off;
};

std::optional<Diagonal> FindDiagonal(const Values& values, int64_t rows, int64_t columns) {
  if (rows < 2 || columns < 2) return std::nullopt;
  Diagonal found;
  found.off = values[1];  // (0, 1)
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) {
      std::string_view v = values[i * columns + j];
      if (i == j) {
        found.diagonal.push_back(v);
      } else if (v != found.off) {
        return std::nullopt;
      }
    }
  }
  return found;
}

// Whether the values do not vary along dimension `k` of `dims`: each equals
// the one with index 0 along k.
bool ConstantAlong(const Values& values, const std::vector<int64_t>& dims, size_t k) {
  int64_t stride = 1;
  for (size_t d = k + 1; d < dims.size(); ++d) stride *= dims[d];
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t index = (static_cast<int64_t>(i) / stride) % dims[k];
    if (index > 0 && values[i] != values[i - index * stride]) return false;
  }
  return true;
}

// The largest dimension (of at least 2) along which the values do not vary.
std::optional<size_t> LargestConstantDimension(const Values& values,
                                               const std::vector<int64_t>& dims) {
  std::optional<size_t> best;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 2 || (best && dims[k] <= dims[*best])) continue;
    if (ConstantAlong(values, dims, k)) best = k;
  }
  return best;
}

// The values with index 0 along dimension `k`, in row-major order.
Values DropDimension(const Values& values, const std::vector<int64_t>& dims, size_t k) {
  int64_t stride = 1;
  for (size_t d = k + 1; d < dims.size(); ++d) stride *= dims[d];
  Values kept;
  for (size_t i = 0; i < values.size(); ++i) {
    if ((static_cast<int64_t>(i) / stride) % dims[k] == 0) kept.push_back(values[i]);
  }
  return kept;
}

HloInstruction* Constant(HloComputation* computation, PrimitiveType type,
                         const std::vector<int64_t>& dims, const Values& values,
                         const std::string& hint) {
  HloInstruction* c = computation->Add(HloOpcode::kConstant, Shape::Array(type, dims), {}, hint);
  const std::string text = LiteralText(values, dims);
  c->set_payload(std::move(text));
  return c;
}

HloInstruction* Splat(HloBuilder& b, const Shape& shape, std::string_view value,
                      const std::string& hint) {
  HloInstruction* scalar = Constant(b.computation(), shape.element_type(), {}, {value}, hint);
  return b.Broadcast(scalar, shape.dims(), {});
}

// select(row == column, on_diagonal, off) for a matrix of `shape`.
HloInstruction* BuildDiagonal(HloBuilder& b, const Shape& shape, const Diagonal& diagonal,
                              const std::string& hint) {
  const Shape index = Shape::Array(PrimitiveType::kS32, shape.dims());
  HloInstruction* row = b.Iota(index, 0);
  HloInstruction* column = b.Iota(index, 1);
  HloInstruction* on_diagonal = b.Compare(row, column, ComparisonDirection::kEq);
  HloInstruction* values;
  if (AllEqual(diagonal.diagonal, diagonal.diagonal.front())) {
    values = Splat(b, shape, diagonal.diagonal.front(), hint);
  } else {
    HloInstruction* vector = Constant(b.computation(), shape.element_type(),
                                      {shape.dim(0)}, diagonal.diagonal, hint);
    values = b.Broadcast(vector, shape.dims(), {0});
  }
  return b.Select(on_diagonal, values, Splat(b, shape, diagonal.off, hint));
}

// The instructions that compute `values` of `shape`, or nullptr when they
// have none of the structures this rule knows.
HloInstruction* Rebuild(HloBuilder& b, const Shape& shape, const Values& values,
                        const std::string& hint) {
  if (AllEqual(values, values.front())) return Splat(b, shape, values.front(), hint);
  const std::vector<int64_t>& dims = shape.dims();
  if (dims.size() == 2) {
    std::optional<Diagonal> diagonal = FindDiagonal(values, dims[0], dims[1]);
    const bool fits = diagonal && (dims[0] == dims[1] ||
                                   AllEqual(diagonal->diagonal, diagonal->diagonal.front()));
    if (fits) return BuildDiagonal(b, shape, *diagonal, hint);
  }
  std::optional<size_t> k = LargestConstantDimension(values, dims);
  if (!k) return nullptr;
  std::vector<int64_t> kept_dims, mapping;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d == *k) continue;
    kept_dims.push_back(dims[d]);
    mapping.push_back(static_cast<int64_t>(d));
  }
  HloInstruction* smaller = Constant(b.computation(), shape.element_type(), kept_dims,
                                     DropDimension(values, dims, *k), hint);
  return b.Broadcast(smaller, dims, mapping);
}

// Why `constant` must stay as it is, or nothing. Its replacement would lose
// attributes (a sharding, say) and print the default layout.
std::optional<std::string> WhyKept(const HloInstruction& constant) {
  for (const HloAttribute& attribute : constant.attributes()) {
    if (attribute.key != "metadata") return "it carries " + attribute.key;
  }
  if (constant.shape().has_layout() && !constant.shape().HasDefaultLayout()) {
    return "its layout is not the default one";
  }
  return std::nullopt;
}

}  // namespace

HloInstruction* RebuildStructuredLiteral(HloInstruction* constant, int64_t min_bytes,
                                         std::vector<std::string>* log) {
  const bool large = Match(constant, m::Constant().IsArray().WithPredicate(
                                         [min_bytes](const HloInstruction* h) {
                                           return h->shape().ByteSize() >= min_bytes &&
                                                  h->shape().rank() > 0;
                                         }));
  if (!large) return nullptr;
  const std::string what = "constant " + constant->name() + " (" +
                           HumanBytes(constant->shape().ByteSize()) + ")";
  if (std::optional<std::string> reason = WhyKept(*constant)) {
    log->push_back(what + " left alone: " + *reason);
    return nullptr;
  }
  std::optional<Values> values = LiteralValues(constant->payload(), constant->shape());
  if (!values) return nullptr;  // elided or complex: nothing to read
  HloBuilder b(constant->parent());
  HloInstruction* replacement = Rebuild(b, constant->shape(), *values, constant->name());
  if (replacement == nullptr) {
    log->push_back(what + " left alone: not a splat, diagonal or broadcast");
    return nullptr;
  }
  constant->parent()->ReplaceInstruction(constant, replacement);
  return replacement;
}

}  // namespace exla
