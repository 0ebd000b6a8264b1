#include "ir/shape.h"

#include <algorithm>
#include <cstdio>

namespace exla {
namespace {

struct TypeInfo {
  PrimitiveType type;
  const char* name;
  int bits;
};

// Names exactly as XLA's primitive_util prints them.
constexpr TypeInfo kTypes[] = {
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kOpaque, "opaque", 0},
};

}  // namespace

PrimitiveType PrimitiveTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (name == info.name) return info.type;
  }
  return PrimitiveType::kInvalid;
}

std::string_view PrimitiveTypeName(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.name;
  }
  return "invalid";
}

int PrimitiveTypeBitWidth(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.bits;
  }
  return 0;
}

int FloatRung(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      return 1;
    case PrimitiveType::kF32:
      return 2;
    case PrimitiveType::kF64:
      return 3;
    default:
      return 0;
  }
}

bool IsFloatingPointType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16:
    case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

bool IsIntegralType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS2: case PrimitiveType::kS4: case PrimitiveType::kS8:
    case PrimitiveType::kS16: case PrimitiveType::kS32: case PrimitiveType::kS64:
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsComplexType(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape shape = ArrayNoLayout(type, std::move(dims));
  shape.SetDefaultLayout();
  return shape;
}

Shape Shape::ArrayNoLayout(PrimitiveType type, std::vector<int64_t> dims) {
  Shape shape;
  shape.kind_ = Kind::kArray;
  shape.element_type_ = type;
  shape.dims_ = std::move(dims);
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.kind_ = Kind::kTuple;
  shape.tuple_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.kind_ = Kind::kToken;
  shape.element_type_ = PrimitiveType::kToken;
  return shape;
}

int64_t Shape::ElementCount() const {
  int64_t count = 1;
  for (int64_t d : dims_) count *= d;
  return count;
}

int64_t Shape::ExtentAlong(const std::vector<int64_t>& dimensions) const {
  int64_t product = 1;
  for (int64_t d : dimensions) product *= dims_[d];
  return product;
}

int64_t Shape::ByteSize() const {
  if (kind_ == Kind::kTuple) {
    int64_t total = 0;
    for (const Shape& s : tuple_) total += s.ByteSize();
    return total;
  }
  if (kind_ != Kind::kArray) return 0;
  // Sub-byte types are packed by XLA's CPU/GPU backends only when asked
  // to; rounding up per element gives an upper bound, which is what a
  // memory limit needs.
  int64_t bits = PrimitiveTypeBitWidth(element_type_);
  int64_t bytes_per_element = (bits + 7) / 8;
  return ElementCount() * bytes_per_element;
}

bool Shape::IsDynamic() const {
  for (bool d : dynamic_) {
    if (d) return true;
  }
  for (const Shape& s : tuple_) {
    if (s.IsDynamic()) return true;
  }
  return false;
}

std::vector<int64_t> Shape::MinorToMajor() const {
  std::vector<int64_t> order;
  if (has_layout_) {
    int64_t value = 0;
    bool in_number = false;
    for (char c : layout_) {
      if (c >= '0' && c <= '9') {
        value = value * 10 + (c - '0');
        in_number = true;
      } else {
        if (in_number) order.push_back(value);
        value = 0;
        in_number = false;
        if (c == ':') break;  // tiling and memory space follow
      }
    }
    if (in_number) order.push_back(value);
    if (static_cast<int>(order.size()) == rank()) return order;
    order.clear();
  }
  for (int i = rank() - 1; i >= 0; --i) order.push_back(i);
  return order;
}

bool Shape::HasDefaultLayout() const {
  std::vector<int64_t> order = MinorToMajor();
  for (int i = 0; i < rank(); ++i) {
    if (order[i] != rank() - 1 - i) return false;
  }
  return layout_.find(':') == std::string::npos;
}

void Shape::SetDefaultLayout() {
  if (kind_ == Kind::kTuple) {
    for (Shape& s : tuple_) s.SetDefaultLayout();
    return;
  }
  if (kind_ != Kind::kArray) return;
  layout_.clear();
  // XLA prints no layout for scalars.
  has_layout_ = rank() > 0;
  for (int i = rank() - 1; i >= 0; --i) {
    layout_ += std::to_string(i);
    if (i > 0) layout_ += ",";
  }
}

void Shape::AppendTo(std::string* out, bool with_layout) const {
  switch (kind_) {
    case Kind::kTuple: {
      out->push_back('(');
      for (size_t i = 0; i < tuple_.size(); ++i) {
        if (i > 0) out->append(", ");
        // XLA marks every fifth element of long tuples.
        if (i > 0 && i % 5 == 0) out->append("/*index=" + std::to_string(i) + "*/");
        tuple_[i].AppendTo(out, with_layout);
      }
      out->push_back(')');
      return;
    }
    case Kind::kToken:
      out->append("token[]");
      return;
    case Kind::kOpaque:
      out->append("opaque[]");
      return;
    case Kind::kArray:
      break;
  }
  out->append(PrimitiveTypeName(element_type_));
  out->push_back('[');
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out->push_back(',');
    if (dims_[i] < 0) {  // unbounded dynamic dimension
      out->push_back('?');
      continue;
    }
    if (is_dynamic_dim(static_cast<int>(i))) out->append("<=");
    out->append(std::to_string(dims_[i]));
  }
  out->push_back(']');
  if (with_layout && has_layout_) {
    out->push_back('{');
    out->append(layout_);
    out->push_back('}');
  }
}

std::string Shape::ToString(bool with_layout) const {
  std::string out;
  AppendTo(&out, with_layout);
  return out;
}

bool Shape::operator==(const Shape& other) const {
  return kind_ == other.kind_ && element_type_ == other.element_type_ &&
         dims_ == other.dims_ && IsDynamic() == other.IsDynamic() &&
         tuple_ == other.tuple_ && has_layout_ == other.has_layout_ &&
         layout_ == other.layout_;
}

bool Shape::Compatible(const Shape& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ == Kind::kTuple) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  return element_type_ == other.element_type_ && dims_ == other.dims_;
}

std::string HumanBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 5) {
    value /= 1000.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, kUnits[unit]);
  }
  return buffer;
}

const Shape& LargestArray(const Shape& shape) {
  if (!shape.IsTuple()) return shape;
  const Shape* largest = &shape;
  int64_t largest_bytes = -1;
  for (const Shape& element : shape.tuple_shapes()) {
    const Shape& candidate = LargestArray(element);
    // A token or an empty tuple holds no array: it never wins over one.
    const int64_t bytes = candidate.IsArray() ? candidate.ByteSize() : -1;
    if (bytes > largest_bytes) {
      largest = &candidate;
      largest_bytes = bytes;
    }
  }
  return *largest;
}

int64_t LargestArrayBytes(const Shape& shape) {
  const Shape& largest = LargestArray(shape);
  return largest.IsArray() ? largest.ByteSize() : 0;
}

bool IsIdentityPermutation(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool InRowMajorOrder(const std::vector<int64_t>& order, const Shape& shape) {
  int64_t last = -1;
  for (int64_t d : order) {
    if (d < 0 || d >= shape.rank()) return false;
    if (shape.dim(static_cast<int>(d)) == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

}  // namespace exla
