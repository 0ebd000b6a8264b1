#include "ir/builder.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace exla {
namespace {

void Check(bool condition, const std::string& message) {
  if (!condition) throw std::logic_error("HloBuilder: " + message);
}

std::string FormatScalar(PrimitiveType type, double value) {
  if (type == PrimitiveType::kPred) return value != 0 ? "true" : "false";
  if (IsIntegralType(type)) return std::to_string(static_cast<long long>(value));
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

}  // namespace

HloInstruction* HloBuilder::Add(HloOpcode opcode, Shape shape,
                                std::vector<HloInstruction*> operands) {
  return computation_->Add(opcode, std::move(shape), std::move(operands));
}

HloInstruction* HloBuilder::Parameter(int64_t number, const Shape& shape,
                                      const std::string& name) {
  HloInstruction* p = computation_->Add(HloOpcode::kParameter, shape, {}, name);
  p->set_payload(std::to_string(number));
  return p;
}

HloInstruction* HloBuilder::ConstantScalar(PrimitiveType type, double value) {
  HloInstruction* c = Add(HloOpcode::kConstant, Shape::Array(type, {}), {});
  c->set_payload(FormatScalar(type, value));
  return c;
}

HloInstruction* HloBuilder::ConstantIndex(int64_t value, PrimitiveType type) {
  // Printed from the integer itself: a double would round offsets past 2^53.
  HloInstruction* c = Add(HloOpcode::kConstant, Shape::Array(type, {}), {});
  c->set_payload(std::to_string(value));
  return c;
}

HloInstruction* HloBuilder::Unary(HloOpcode opcode, HloInstruction* operand) {
  Check(operand->shape().IsArray(), std::string(HloOpcodeString(opcode)) + " needs an array operand");
  return Add(opcode, operand->shape(), {operand});
}

HloInstruction* HloBuilder::Binary(HloOpcode opcode, HloInstruction* lhs,
                                   HloInstruction* rhs) {
  Check(lhs->shape().Compatible(rhs->shape()),
        std::string(HloOpcodeString(opcode)) + " operands differ: " + lhs->shape().ToString() + " vs " + rhs->shape().ToString());
  Shape shape = Shape::Array(lhs->shape().element_type(), lhs->shape().dims());
  return Add(opcode, shape, {lhs, rhs});
}

HloInstruction* HloBuilder::Compare(HloInstruction* lhs, HloInstruction* rhs,
                                    ComparisonDirection direction) {
  Check(lhs->shape().Compatible(rhs->shape()), "compare operands differ");
  HloInstruction* c = Add(HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, lhs->shape().dims()),
                          {lhs, rhs});
  c->SetComparisonDirection(direction);
  return c;
}

HloInstruction* HloBuilder::Select(HloInstruction* predicate, HloInstruction* on_true,
                                   HloInstruction* on_false) {
  Check(on_true->shape().Compatible(on_false->shape()), "select branches differ");
  return Add(HloOpcode::kSelect, Shape::Array(on_true->shape().element_type(), on_true->shape().dims()),
             {predicate, on_true, on_false});
}

HloInstruction* HloBuilder::Convert(HloInstruction* operand, PrimitiveType type) {
  return Add(HloOpcode::kConvert, Shape::Array(type, operand->shape().dims()), {operand});
}

HloInstruction* HloBuilder::Broadcast(HloInstruction* operand,
                                      const std::vector<int64_t>& output_dims,
                                      const std::vector<int64_t>& dimensions) {
  Check(static_cast<int>(dimensions.size()) == operand->shape().rank(),
        "broadcast needs one output dimension per operand dimension");
  for (size_t i = 0; i < dimensions.size(); ++i) {
    Check(dimensions[i] < static_cast<int64_t>(output_dims.size()) &&
              output_dims[dimensions[i]] == operand->shape().dim(static_cast<int>(i)),
          "broadcast dimension mismatch");
  }
  HloInstruction* b =
      Add(HloOpcode::kBroadcast, Shape::Array(operand->shape().element_type(), output_dims), {operand});
  b->SetIntListAttribute("dimensions", dimensions);
  return b;
}

HloInstruction* HloBuilder::Reshape(HloInstruction* operand, const std::vector<int64_t>& dims) {
  Shape shape = Shape::Array(operand->shape().element_type(), dims);
  Check(shape.ElementCount() == operand->shape().ElementCount(), "reshape changes element count");
  return Add(HloOpcode::kReshape, shape, {operand});
}

HloInstruction* HloBuilder::Transpose(HloInstruction* operand,
                                      const std::vector<int64_t>& permutation) {
  Check(static_cast<int>(permutation.size()) == operand->shape().rank(), "bad permutation");
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand->shape().dim(static_cast<int>(p)));
  HloInstruction* t =
      Add(HloOpcode::kTranspose, Shape::Array(operand->shape().element_type(), dims), {operand});
  t->SetIntListAttribute("dimensions", permutation);
  return t;
}

HloInstruction* HloBuilder::Slice(HloInstruction* operand, const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& limits) {
  const Shape& in = operand->shape();
  Check(static_cast<int>(starts.size()) == in.rank() && limits.size() == starts.size(),
        "slice needs bounds for every dimension");
  std::vector<int64_t> dims;
  std::vector<SliceBounds> bounds;
  for (size_t i = 0; i < starts.size(); ++i) {
    Check(0 <= starts[i] && starts[i] <= limits[i] && limits[i] <= in.dim(static_cast<int>(i)),
          "slice bounds out of range");
    dims.push_back(limits[i] - starts[i]);
    bounds.push_back({starts[i], limits[i], 1});
  }
  HloInstruction* s = Add(HloOpcode::kSlice, Shape::Array(in.element_type(), dims), {operand});
  s->SetSlice(bounds);
  return s;
}

HloInstruction* HloBuilder::DynamicSlice(HloInstruction* operand,
                                         const std::vector<HloInstruction*>& starts,
                                         const std::vector<int64_t>& sizes) {
  Check(static_cast<int>(starts.size()) == operand->shape().rank() &&
            sizes.size() == starts.size(),
        "dynamic-slice needs a start and a size per dimension");
  std::vector<HloInstruction*> operands = {operand};
  operands.insert(operands.end(), starts.begin(), starts.end());
  HloInstruction* s =
      Add(HloOpcode::kDynamicSlice, Shape::Array(operand->shape().element_type(), sizes), operands);
  s->SetIntListAttribute("dynamic_slice_sizes", sizes);
  return s;
}

HloInstruction* HloBuilder::DynamicUpdateSlice(HloInstruction* operand, HloInstruction* update,
                                               const std::vector<HloInstruction*>& starts) {
  Check(static_cast<int>(starts.size()) == operand->shape().rank(),
        "dynamic-update-slice needs a start per dimension");
  std::vector<HloInstruction*> operands = {operand, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Add(HloOpcode::kDynamicUpdateSlice,
             Shape::Array(operand->shape().element_type(), operand->shape().dims()), operands);
}

HloInstruction* HloBuilder::Concatenate(const std::vector<HloInstruction*>& operands,
                                        int64_t dimension) {
  Check(!operands.empty(), "concatenate needs operands");
  std::vector<int64_t> dims = operands[0]->shape().dims();
  for (size_t i = 1; i < operands.size(); ++i) {
    dims[dimension] += operands[i]->shape().dim(static_cast<int>(dimension));
  }
  HloInstruction* c =
      Add(HloOpcode::kConcatenate, Shape::Array(operands[0]->shape().element_type(), dims), operands);
  c->SetIntListAttribute("dimensions", {dimension});
  return c;
}

HloInstruction* HloBuilder::Iota(const Shape& shape, int64_t dimension) {
  HloInstruction* i = Add(HloOpcode::kIota, Shape::Array(shape.element_type(), shape.dims()), {});
  i->SetIntAttribute("iota_dimension", dimension);
  return i;
}

Shape InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensions& dims,
                    PrimitiveType result_type) {
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    for (int64_t y : v) {
      if (y == x) return true;
    }
    return false;
  };
  Check(dims.lhs_batch.size() == dims.rhs_batch.size() &&
            dims.lhs_contracting.size() == dims.rhs_contracting.size(),
        "dot dimension lists differ in length");
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    Check(lhs.dim(static_cast<int>(dims.lhs_contracting[i])) ==
              rhs.dim(static_cast<int>(dims.rhs_contracting[i])),
          "dot contracting dimensions differ in size");
  }
  std::vector<int64_t> out;
  for (int64_t d : dims.lhs_batch) out.push_back(lhs.dim(static_cast<int>(d)));
  for (int i = 0; i < lhs.rank(); ++i) {
    if (!contains(dims.lhs_batch, i) && !contains(dims.lhs_contracting, i)) out.push_back(lhs.dim(i));
  }
  for (int i = 0; i < rhs.rank(); ++i) {
    if (!contains(dims.rhs_batch, i) && !contains(dims.rhs_contracting, i)) out.push_back(rhs.dim(i));
  }
  PrimitiveType type = result_type == PrimitiveType::kInvalid ? lhs.element_type() : result_type;
  return Shape::Array(type, out);
}

HloInstruction* HloBuilder::Dot(HloInstruction* lhs, HloInstruction* rhs,
                                const DotDimensions& dims, PrimitiveType result_type) {
  HloInstruction* d =
      Add(HloOpcode::kDot, InferDotShape(lhs->shape(), rhs->shape(), dims, result_type), {lhs, rhs});
  d->SetDotDimensions(dims);
  return d;
}

HloInstruction* HloBuilder::Reduce(HloInstruction* operand, HloInstruction* init,
                                   const std::vector<int64_t>& dimensions,
                                   HloComputation* reducer) {
  std::vector<int64_t> out;
  for (int i = 0; i < operand->shape().rank(); ++i) {
    bool reduced = false;
    for (int64_t d : dimensions) reduced |= (d == i);
    if (!reduced) out.push_back(operand->shape().dim(i));
  }
  HloInstruction* r =
      Add(HloOpcode::kReduce, Shape::Array(operand->shape().element_type(), out), {operand, init});
  r->SetIntListAttribute("dimensions", dimensions);
  r->SetCalledComputation("to_apply", reducer);
  return r;
}

HloInstruction* HloBuilder::Tuple(const std::vector<HloInstruction*>& elements) {
  std::vector<Shape> shapes;
  for (HloInstruction* e : elements) shapes.push_back(e->shape());
  return Add(HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

HloInstruction* HloBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  Check(tuple->shape().IsTuple() && index < static_cast<int64_t>(tuple->shape().tuple_shapes().size()),
        "get-tuple-element index out of range");
  HloInstruction* g = Add(HloOpcode::kGetTupleElement, tuple->shape().tuple_shape(static_cast<int>(index)),
                          {tuple});
  g->SetIntAttribute("index", index);
  return g;
}

HloInstruction* HloBuilder::While(HloInstruction* init, HloComputation* condition,
                                  HloComputation* body) {
  HloInstruction* w = Add(HloOpcode::kWhile, init->shape(), {init});
  w->SetCalledComputation("condition", condition);
  w->SetCalledComputation("body", body);
  return w;
}

HloComputation* AddScalarReducer(HloModule* module, HloOpcode opcode,
                                 PrimitiveType type, const HloComputation* before) {
  auto computation = std::make_unique<HloComputation>(module->UniqueName(std::string(HloOpcodeString(opcode)) + "_reducer"));
  HloComputation* raw = module->AddComputationBefore(std::move(computation), before);
  HloBuilder b(raw);
  Shape scalar = Shape::Array(type, {});
  HloInstruction* x = b.Parameter(0, scalar, "x");
  HloInstruction* y = b.Parameter(1, scalar, "y");
  raw->set_root(b.Binary(opcode, x, y));
  return raw;
}

}  // namespace exla
