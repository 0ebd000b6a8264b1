// Rules about attributes and literals rather than operands: parameter
// replication, constant literals, batch normalization's feature index, and
// the checks of top-k, scatter/gather dimension numbers and the
// dimension-size ops that run before the shape rules.
#include <cctype>
#include <cstdlib>

#include "ir/literal_text.h"
#include "ir/verifier_checks.h"

namespace exla {
namespace verifier_internal {
namespace {

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += LeafCount(element);
  return count;
}

// `{1,2}` or `7` of an attribute the parser keeps as text; nothing if it
// is absent or not a plain list of integers.
std::optional<std::vector<int64_t>> RawIntList(const HloInstruction& instruction,
                                               const char* key) {
  std::optional<std::string> raw = instruction.RawAttribute(key);
  if (!raw) return std::nullopt;
  std::vector<int64_t> values;
  int64_t value = 0;
  bool in_number = false;
  for (char c : *raw) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (value > (int64_t{1} << 40)) return std::nullopt;
      value = value * 10 + (c - '0');
      in_number = true;
    } else if (c == ',' || c == '{' || c == '}' || c == ' ') {
      if (in_number) values.push_back(value);
      value = 0;
      in_number = false;
    } else {
      return std::nullopt;
    }
  }
  if (in_number) values.push_back(value);
  return values;
}

// The entries of a `{true,false}` list, or nothing after reporting one that
// is neither true nor false (as XLA's parser reads them) or a malformed list.
std::optional<int64_t> ReplicationEntries(const InstructionCheck& check, std::string list) {
  if (list.size() < 2 || list.front() != '{' || list.back() != '}') {
    check.Error("parameter_replication=" + list + " is not a {true,false,...} list");
    return std::nullopt;
  }
  list = list.substr(1, list.size() - 2);
  int64_t entries = 0;
  const bool empty = list.find_first_not_of(' ') == std::string::npos;
  for (size_t start = 0; !empty;) {
    const size_t comma = list.find(',', start);
    std::string entry =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    if (entry != "true" && entry != "false") {
      check.Error("parameter_replication entry '" + entry + "' is neither true nor false");
      return std::nullopt;
    }
    ++entries;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return entries;
}

// The dimension-number attributes of scatter or gather with the rank each
// one's dimensions index; false after reporting gather's slice_sizes.
struct DimensionField {
  const char* key;
  int rank;
};

bool DimensionFields(const InstructionCheck& check, std::vector<DimensionField>* fields) {
  const bool scatter = check.instruction().Is(HloOpcode::kScatter);
  const int count = check.operand_count();
  const int operand_rank = check.operand_shape(0).rank();
  const int indices_rank = check.operand_shape(scatter ? count / 2 : 1).rank();
  if (scatter) {
    const int updates_rank = check.operand_shape(count / 2 + 1).rank();
    *fields = {{"update_window_dims", updates_rank},
               {"inserted_window_dims", operand_rank},
               {"scatter_dims_to_operand_dims", operand_rank},
               {"input_batching_dims", operand_rank},
               {"scatter_indices_batching_dims", indices_rank}};
    return true;
  }
  *fields = {{"offset_dims", check.shape().rank()},
             {"collapsed_slice_dims", operand_rank},
             {"start_index_map", operand_rank},
             {"operand_batching_dims", operand_rank},
             {"start_indices_batching_dims", indices_rank}};
  std::optional<std::vector<int64_t>> sizes = RawIntList(check.instruction(), "slice_sizes");
  if (sizes && static_cast<int>(sizes->size()) != operand_rank) {
    check.Error("gather slice_sizes=" + Join(*sizes) + " must give one size per operand "
                "dimension (" + std::to_string(operand_rank) + ")");
    return false;
  }
  return true;
}

}  // namespace

// XLA's parser: one entry per array leaf of the parameter's shape.
void CheckParameter(const InstructionCheck& check) {
  std::optional<std::string> replication = check.instruction().RawAttribute("parameter_replication");
  if (!replication) return;
  std::optional<int64_t> entries = ReplicationEntries(check, *replication);
  if (entries && *entries != LeafCount(check.shape())) {
    check.Error("parameter has " + std::to_string(LeafCount(check.shape())) + " leaf buffer(s) "
                "but parameter_replication has " + std::to_string(*entries) + " element(s)");
  }
}

// Values (as XLA's parser refuses others), then as many as the shape holds,
// nested as its dimensions.
void CheckConstant(const InstructionCheck& check) {
  const Shape& shape = check.shape();
  const std::string& literal = check.instruction().payload();
  if (std::optional<std::string> value = LiteralValueError(literal, shape)) {
    return check.Error("constant literal has " + *value);
  }
  if (!shape.IsArray() || IsComplexType(shape.element_type())) return;
  const int64_t count = LiteralElementCount(literal);
  if (count >= 0 && count != shape.ElementCount()) {
    return check.Error("constant literal has " + std::to_string(count) +
                       " element(s) but its shape " + shape.ToString(false) + " holds " +
                       std::to_string(shape.ElementCount()));
  }
  if (std::optional<std::string> nesting = LiteralNestingError(literal, shape)) {
    check.Error("constant literal has " + *nesting);
  }
}

// training(x, scale, offset) -> (x, mean, variance);
// inference(x, scale, offset, mean, variance) -> x;
// grad(x, scale, mean, variance, grad_y) -> (grad_x, grad_scale, grad_offset).
void CheckBatchNorm(const InstructionCheck& check) {
  for (const HloInstruction* operand : check.instruction().operands()) {
    if (!operand->shape().IsArray()) return check.Error(check.op() + " operands must be arrays");
  }
  const Shape& x = check.operand_shape(0);
  // feature_index is carried as raw text (no pass decodes it).
  std::optional<int64_t> feature;
  if (std::optional<std::string> raw = check.instruction().RawAttribute("feature_index")) {
    char* end = nullptr;
    long long value = std::strtoll(raw->c_str(), &end, 10);
    if (!raw->empty() && end != nullptr && *end == '\0') feature = value;
  }
  if (!feature || *feature < 0 || *feature >= x.rank()) {
    return check.Error(check.op() + " feature_index out of range for " + x.ToString(false));
  }
  Shape per_feature = Shape::Array(x.element_type(), {x.dim(static_cast<int>(*feature))});
  const bool grad = check.instruction().Is(HloOpcode::kBatchNormGrad);
  for (int i = 1; i < check.operand_count(); ++i) {
    const Shape& expected = grad && i == 4 ? x : per_feature;
    if (!SameShape(check.operand_shape(i), expected)) {
      return check.Error(check.op() + " operand " + std::to_string(i) + " is " +
                         check.operand_shape(i).ToString(false) + ", not " +
                         expected.ToString(false));
    }
  }
  if (check.instruction().Is(HloOpcode::kBatchNormInference)) return check.ExpectShape(x);
  check.ExpectShape(Shape::Tuple({x, per_feature, per_feature}));
}

// topk(x), k=K: (x's type [..., K], s32[..., K]).
bool CheckTopK(const InstructionCheck& check) {
  if (!check.ExpectOperands(1)) return false;
  const Shape& in = check.operand_shape(0);
  std::optional<std::vector<int64_t>> k = RawIntList(check.instruction(), "k");
  if (!in.IsArray() || in.rank() == 0 || !k || k->size() != 1) {
    check.Error("topk needs an array operand of rank 1 or more and k=<integer>");
    return false;
  }
  std::vector<int64_t> dims = in.dims();
  dims.back() = (*k)[0];
  Shape inferred = Shape::Tuple({Shape::Array(in.element_type(), dims),
                                 Shape::Array(PrimitiveType::kS32, dims)});
  if (!SameShape(check.shape(), inferred)) {
    check.Error("topk has shape " + check.shape().ToString(false) + " but its operand gives " +
                inferred.ToString(false));
    return false;
  }
  return true;
}

bool CheckDimensionNumbers(const InstructionCheck& check) {
  const bool scatter = check.instruction().Is(HloOpcode::kScatter);
  const int count = check.operand_count();
  if (scatter ? (count < 3 || count % 2 == 0) : count != 2) {
    check.Error(check.op() + (scatter ? " takes operands, indices and as many updates as "
                                        "operands" : " takes 2 operand(s)") +
                ", has " + std::to_string(count));
    return false;
  }
  for (const HloInstruction* operand : check.instruction().operands()) {
    if (!operand->shape().IsArray()) return true;  // reported elsewhere, or not checked
  }
  if (!scatter && !check.shape().IsArray()) return true;
  std::vector<DimensionField> fields;
  if (!DimensionFields(check, &fields)) return false;
  for (const DimensionField& field : fields) {
    std::optional<std::vector<int64_t>> dims = RawIntList(check.instruction(), field.key);
    if (dims && !check.ExpectDimensions(check.op() + " " + field.key, *dims, field.rank)) {
      return false;
    }
  }
  const int indices_rank = check.operand_shape(scatter ? count / 2 : 1).rank();
  std::optional<std::vector<int64_t>> index_vector_dim =
      RawIntList(check.instruction(), "index_vector_dim");
  if (index_vector_dim && index_vector_dim->size() == 1 && (*index_vector_dim)[0] > indices_rank) {
    check.Error(check.op() + " index_vector_dim=" + std::to_string((*index_vector_dim)[0]) +
                " out of range for indices of rank " + std::to_string(indices_rank));
    return false;
  }
  return true;
}

bool CheckDimensionSizeOperand(const InstructionCheck& check) {
  if (!check.operand_shape(0).IsArray()) {
    check.Error(check.op() + " operand must be an array");
    return false;
  }
  std::vector<int64_t> dims = check.instruction().dimensions();
  if (dims.size() != 1) {
    check.Error(check.op() + " needs one dimension, has " + Join(dims));
    return false;
  }
  return check.ExpectDimensions(check.op() + " dimensions", dims, check.operand_shape(0).rank());
}

}  // namespace verifier_internal
}  // namespace exla
