// The parser's shapes: `f32[2,<=3]{1,0}`, tuples `(f32[], s32[])`, tokens,
// and the layouts XLA's parser accepts.
#include <cctype>

#include "ir/parser_internal.h"

namespace exla {

Shape HloParser::ParseShapeOnly() {
  SkipSpace();
  Shape shape = ParseShape();
  SkipSpace();
  if (!AtEnd()) Fail("unexpected text after shape");
  return shape;
}

Shape HloParser::ParseShape() {
  SkipSpace();
  Shape shape;
  if (Consume('(')) {
    ParseTupleElements(&shape);
    return shape;
  }
  size_t start = pos_;
  while (!AtEnd() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  std::string_view type_name = text_.substr(start, pos_ - start);
  PrimitiveType type = PrimitiveTypeFromName(type_name);
  if (type == PrimitiveType::kInvalid) {
    pos_ = start;
    Fail(type_name.empty() ? "expected a shape" : "unknown element type in shape");
  }
  if (Peek() != '[') Fail("expected '[' after the element type");
  ++pos_;
  shape.element_type_ = type;
  if (type == PrimitiveType::kToken) shape.kind_ = Shape::Kind::kToken;
  if (type == PrimitiveType::kOpaque) shape.kind_ = Shape::Kind::kOpaque;
  ParseDimensions(&shape);
  if (Peek() == '{') ParseLayout(&shape);
  return shape;
}

// After the '(' of a tuple shape: its elements and the ')'.
void HloParser::ParseTupleElements(Shape* shape) {
  if (shape_nesting_ == kMaxShapeNesting) {
    --pos_;
    Fail("tuple shape nested more than " + std::to_string(kMaxShapeNesting) + " levels deep");
  }
  ++shape_nesting_;
  shape->kind_ = Shape::Kind::kTuple;
  SkipSpace();
  if (!Consume(')')) {
    do {
      shape->tuple_.push_back(ParseShape());
    } while (Consume(','));
    Expect(')', "to close the tuple shape");
  }
  --shape_nesting_;
}

// After the '[': sizes (`?` and `<=N` dynamic) up to and including the ']'.
void HloParser::ParseDimensions(Shape* shape) {
  SkipSpace();
  // After a ',' another size must follow: `f32[2,]` is an error.
  for (bool more = Peek() != ']'; more;) {
    SkipSpace();
    bool dynamic = false;
    int64_t size = -1;
    if (Peek() == '?') {
      ++pos_;
      dynamic = true;
    } else {
      if (Peek() == '<' && Peek(1) == '=') {
        pos_ += 2;
        dynamic = true;
      }
      size = ParseInteger();
    }
    shape->dims_.push_back(size);
    if (dynamic) {
      shape->dynamic_.resize(shape->dims_.size(), false);
      shape->dynamic_.back() = true;
    }
    SkipSpace();
    more = Peek() == ',';
    if (more) ++pos_;
  }
  if (!shape->dynamic_.empty()) shape->dynamic_.resize(shape->dims_.size(), false);
  if (Peek() != ']') Fail("expected ']' to close the dimensions");
  ++pos_;
}

// `{1,0}` after the dimensions, kept as text once it is known to be valid.
void HloParser::ParseLayout(Shape* shape) {
  size_t layout_start = pos_;
  ++pos_;
  shape->has_layout_ = true;
  shape->layout_ = std::string(ScanBalanced('}'));
  if (std::optional<std::string> error = LayoutError(*shape)) FailAt(layout_start, *error);
}

// XLA's parser: the minor-to-major list (before any ':' with tiling or
// memory space) has one entry per dimension; its verifier: a permutation.
std::optional<std::string> HloParser::LayoutError(const Shape& shape) {
  std::string_view layout = shape.layout_;
  layout = layout.substr(0, layout.find(':'));
  std::vector<int64_t> order;
  size_t i = 0;
  while (i < layout.size()) {
    char c = layout[i];
    if (c == ' ' || c == ',') {
      ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return "malformed layout '{" + shape.layout_ + "}'";
    }
    int64_t value = 0;
    while (i < layout.size() && std::isdigit(static_cast<unsigned char>(layout[i]))) {
      if (value > (int64_t{1} << 40)) return "layout dimension out of range";
      value = value * 10 + (layout[i++] - '0');
    }
    order.push_back(value);
  }
  int rank = static_cast<int>(shape.dims_.size());
  if (static_cast<int>(order.size()) != rank) {
    return "the layout {" + std::string(layout) + "} lists " + std::to_string(order.size()) +
           " dimension(s) for a shape of rank " + std::to_string(rank);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d >= rank || seen[d]) {
      return "the layout {" + std::string(layout) + "} is not a permutation of the " +
             std::to_string(rank) + " dimension(s)";
    }
    seen[d] = true;
  }
  return std::nullopt;
}

}  // namespace exla
