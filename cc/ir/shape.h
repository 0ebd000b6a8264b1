// Shapes of HLO values: arrays (with an optional layout), tuples, tokens.
//
// XLA prints shapes as `f32[2,3]{1,0}`, `pred[]`, `(s32[], f64[4]{0})`,
// `token[]`, and bounded dynamic dimensions as `f32[<=8]`. exla only needs
// element types, dimensions and byte sizes to reason about memory; the layout
// (minor-to-major order plus optional tiling/memory-space suffixes) is kept as
// the text XLA printed so that it round-trips exactly.
#ifndef EXLA_IR_SHAPE_H_
#define EXLA_IR_SHAPE_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace exla {

class HloParser;

enum class PrimitiveType {
  kInvalid,
  kPred,
  kS2, kS4, kS8, kS16, kS32, kS64,
  kU2, kU4, kU8, kU16, kU32, kU64,
  kF16, kBF16, kF32, kF64,
  kF8E5M2, kF8E4M3, kF8E4M3FN, kF8E4M3B11FNUZ, kF8E5M2FNUZ, kF8E4M3FNUZ,
  kF8E3M4, kF8E8M0FNU, kF4E2M1FN,
  kC64, kC128,
  kToken, kOpaque,
};

// "f32" -> kF32; kInvalid for anything else.
PrimitiveType PrimitiveTypeFromName(std::string_view name);
// Floating-point types ordered so that a convert to a higher rung represents
// every value exactly (f16/bf16 -> f32 -> f64); 0 for every other type.
int FloatRung(PrimitiveType type);
std::string_view PrimitiveTypeName(PrimitiveType type);
// Storage size of one element in bits (1 byte for pred, 4 bits for s4).
int PrimitiveTypeBitWidth(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);
bool IsIntegralType(PrimitiveType type);
bool IsComplexType(PrimitiveType type);

class Shape {
 public:
  enum class Kind { kArray, kTuple, kToken, kOpaque };

  Shape() = default;
  // An array shape with the default (row-major) layout.
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  // An array shape without a printed layout (as in computation signatures).
  static Shape ArrayNoLayout(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();

  Kind kind() const { return kind_; }
  bool IsArray() const { return kind_ == Kind::kArray; }
  bool IsTuple() const { return kind_ == Kind::kTuple; }
  bool IsToken() const { return kind_ == Kind::kToken; }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_[i]; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t ElementCount() const;
  // The product of the extents along `dimensions` (a dot's contracted
  // extent, its batch): 1 for none.
  int64_t ExtentAlong(const std::vector<int64_t>& dimensions) const;
  // Bytes an array of this shape occupies; the sum over elements for tuples.
  int64_t ByteSize() const;

  // Dynamic dimensions: `<=N` (bounded) is printed as dynamic with bound N.
  bool is_dynamic_dim(int i) const { return !dynamic_.empty() && dynamic_[i]; }
  bool IsDynamic() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  const Shape& tuple_shape(int i) const { return tuple_[i]; }

  // Layout text between the braces, e.g. "1,0" or "1,0:T(8,128)".
  bool has_layout() const { return has_layout_; }
  const std::string& layout() const { return layout_; }
  // Minor-to-major order from the layout; row-major if there is none.
  std::vector<int64_t> MinorToMajor() const;
  bool HasDefaultLayout() const;

  // Replaces one dimension, keeping the layout (the layout names dimensions,
  // not sizes, so resizing never invalidates it). A dimension outside the
  // rank (any, on a tuple) throws std::out_of_range: a pass that slices a
  // tuple as if it were an array must fail as an exception, which exla's
  // frontends turn into a fallback, not write past the dimensions and take
  // the user's process down.
  void set_dim(int i, int64_t size) {
    if (i < 0 || i >= rank()) {
      throw std::out_of_range("dimension " + std::to_string(i) + " of " + ToString() + " set");
    }
    dims_[i] = size;
  }
  void ClearLayout() { has_layout_ = false; layout_.clear(); }
  void SetDefaultLayout();

  // XLA's text form, e.g. "f32[2,3]{1,0}". `with_layout=false` prints the
  // form used in computation signatures.
  std::string ToString(bool with_layout = true) const;
  void AppendTo(std::string* out, bool with_layout = true) const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Same element type and dimensions, ignoring layouts.
  bool Compatible(const Shape& other) const;

 private:
  friend class HloParser;
  Kind kind_ = Kind::kArray;
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;  // empty when no dimension is dynamic
  std::vector<Shape> tuple_;
  bool has_layout_ = false;
  std::string layout_;
};

// Human-readable byte count, e.g. "28.8 GB" (decimal units, as the flags).
std::string HumanBytes(int64_t bytes);

// An array: itself; a tuple: its largest array element, at any depth (what
// must fit in memory at once; the first of equals).
const Shape& LargestArray(const Shape& shape);

// Bytes of `LargestArray(shape)`.
int64_t LargestArrayBytes(const Shape& shape);

// Whether `permutation` keeps every dimension in place (0, 1, 2, ...): a
// transpose by it moves no element.
bool IsIdentityPermutation(const std::vector<int64_t>& permutation);

// Whether the dimensions of `shape`, taken in `order`, come in its own
// row-major order once those of extent 1 are left out: read in that order
// (a transpose by it), a row-major array moves no element in memory.
bool InRowMajorOrder(const std::vector<int64_t>& order, const Shape& shape);

}  // namespace exla

#endif  // EXLA_IR_SHAPE_H_
