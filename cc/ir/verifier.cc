#include "ir/verifier.h"

#include "ir/builder.h"  // InferDotShape: the verifier and the builder agree on dot shapes
#include "ir/literal_text.h"
#include "ir/verifier_rules.h"
#include "ir/verifier_structure.h"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <optional>
#include <string_view>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace exla {
namespace {

using verifier_internal::ArityFor;
using verifier_internal::AttributeAllowed;
using verifier_internal::CheckedByteSize;
using verifier_internal::HasDynamicDimension;
using verifier_internal::Join;
using verifier_internal::LiteralTokenError;
using verifier_internal::Rule;
using verifier_internal::RuleFor;
using verifier_internal::SameShape;

// Whether `token` is one value of an array constant's literal as XLA's parser
// reads it: a decimal number (sign, fraction and exponent optional), true,
// false, inf or nan (signed, NaN with a payload), or `...` of an elided one.
bool IsLiteralValue(std::string_view token) {
  if (token == "..." || token == "true" || token == "false") return true;
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
  if (token == "inf" || token == "nan") return true;
  if (token.substr(0, 4) == "nan(" && token.back() == ')') return true;
  auto digit = [&](size_t i) { return std::isdigit(static_cast<unsigned char>(token[i])) != 0; };
  size_t i = 0;
  bool digits = false;
  while (i < token.size() && digit(i)) ++i, digits = true;
  if (i < token.size() && token[i] == '.') {
    ++i;
    while (i < token.size() && digit(i)) ++i, digits = true;
  }
  if (!digits) return false;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    size_t start = i;
    while (i < token.size() && digit(i)) ++i;
    if (i == start) return false;
  }
  return i == token.size();
}

// The first piece of an array constant's literal that is no value (a name,
// say, where an opcode was swapped for `constant`), or nothing. Comments
// (`/*i0=0*/`) are skipped.
std::optional<std::string> LiteralValueError(std::string_view literal, PrimitiveType type) {
  // Integers and booleans take no fraction, exponent, inf or nan.
  const bool integral = !IsFloatingPointType(type);
  auto fits = [&](std::string_view token) {
    if (!integral || token == "...") return true;
    if (token == "true" || token == "false") return true;
    if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
    if (token.empty()) return false;
    for (char c : token) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  size_t i = 0;
  auto comment = [&](size_t at) {
    return at + 1 < literal.size() && literal[at] == '/' && literal[at + 1] == '*';
  };
  while (i < literal.size()) {
    char c = literal[i];
    if (comment(i)) {
      size_t end = literal.find("*/", i + 2);
      if (end == std::string_view::npos) return "an unterminated comment";
      i = end + 2;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || c == '{' || c == '}' || c == ',') {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < literal.size() && !std::isspace(static_cast<unsigned char>(literal[i])) &&
           literal[i] != '{' && literal[i] != '}' && literal[i] != ',' && !comment(i)) {
      ++i;
    }
    std::string_view token = literal.substr(start, i - start);
    if (!IsLiteralValue(token)) return "'" + std::string(token) + "', which is not a value";
    if (!fits(token)) {
      return "'" + std::string(token) + "', which is not a value of " +
             std::string(PrimitiveTypeName(type));
    }
  }
  return std::nullopt;
}

class Verifier {
 public:
  explicit Verifier(const HloModule& module) : module_(module) {}

  std::vector<VerifierError> Run() {
    VerifyModuleStructure();
    for (const auto& computation : module_.computations()) VerifyComputation(*computation);
    return std::move(errors_);
  }

 private:
  void Error(const HloComputation* computation, const HloInstruction* instruction,
             std::string message) {
    errors_.push_back({computation ? computation->name() : "",
                       instruction ? instruction->name() : "", std::move(message)});
  }
  void Error(std::string message) { Error(computation_, instruction_, std::move(message)); }
  verifier_internal::Report Reporter() {
    return [this](const HloComputation* computation, const HloInstruction* instruction,
                  std::string message) { Error(computation, instruction, std::move(message)); };
  }

  void VerifyModuleStructure() {
    const HloComputation* first_entry = nullptr;
    for (const auto& computation : module_.computations()) {
      if (!computation->is_entry()) continue;
      if (first_entry != nullptr) {
        Error(computation.get(), nullptr,
              "a second ENTRY computation (the first is '" + first_entry->name() + "')");
      }
      if (first_entry == nullptr) first_entry = computation.get();
    }
    if (module_.entry() == nullptr) Error(nullptr, nullptr, "the module has no ENTRY computation");
    verifier_internal::CheckCallGraphIsAcyclic(module_, Reporter());
  }

  void VerifyComputation(const HloComputation& computation) {
    computation_ = &computation;
    instruction_ = nullptr;
    if (computation.root() == nullptr || computation.root()->parent() != &computation) {
      Error("the root is not an instruction of this computation");
    }
    VerifyParameterNumbers(computation);
    verifier_internal::CheckOperandGraphIsAcyclic(computation, Reporter());
    for (const auto& instruction : computation.instructions()) {
      instruction_ = instruction.get();
      VerifyInstruction(*instruction);
    }
    instruction_ = nullptr;
  }

  void VerifyParameterNumbers(const HloComputation& computation) {
    std::unordered_map<int64_t, const HloInstruction*> numbers;
    for (const auto& instruction : computation.instructions()) {
      if (RuleFor(instruction->opcode()) != Rule::kParameter) continue;
      int64_t number;
      try {
        number = std::stoll(instruction->payload());
      } catch (const std::exception&) {
        Error(&computation, instruction.get(),
              "parameter number '" + instruction->payload() + "' is not a valid integer");
        continue;
      }
      auto [it, inserted] = numbers.emplace(number, instruction.get());
      if (!inserted) {
        Error(&computation, instruction.get(),
              "duplicate parameter number " + std::to_string(number) + " (also '" +
                  it->second->name() + "')");
      }
    }
    for (const auto& [number, instruction] : numbers) {
      if (number >= static_cast<int64_t>(numbers.size())) {
        int64_t missing = 0;
        while (numbers.count(missing)) ++missing;
        Error(&computation, instruction,
              "parameter numbers must be 0.." + std::to_string(numbers.size() - 1) + ": " +
                  std::to_string(number) + " is used but " + std::to_string(missing) +
                  " is missing");
        break;
      }
    }
  }

  // Whether the shape's dimensions are valid; the shape rules below may then
  // count its elements and bytes without overflowing.
  bool VerifyShapeDimensions(const Shape& shape) {
    bool valid = true;
    if (shape.IsTuple()) {
      for (const Shape& element : shape.tuple_shapes()) valid &= VerifyShapeDimensions(element);
    }
    for (int i = 0; i < shape.rank(); ++i) {
      if (shape.dim(i) < 0 && !shape.is_dynamic_dim(i)) {
        Error("negative dimension " + std::to_string(shape.dim(i)) + " in shape " +
              shape.ToString());
        valid = false;
      }
    }
    if (valid && !HasDynamicDimension(shape) && !CheckedByteSize(shape).has_value()) {
      Error("shape " + shape.ToString(false) + " has more than 2^63 - 1 bytes");
      valid = false;
    }
    return valid;
  }

  static int64_t LeafCount(const Shape& shape) {
    if (!shape.IsTuple()) return 1;
    int64_t count = 0;
    for (const Shape& element : shape.tuple_shapes()) count += LeafCount(element);
    return count;
  }

  bool ExpectOperands(const HloInstruction& instruction, int count) {
    if (instruction.operand_count() == count) return true;
    Error(std::string(instruction.opcode_name()) + " takes " + std::to_string(count) + " operand(s), has " +
          std::to_string(instruction.operand_count()));
    return false;
  }

  bool ExpectArrays(const HloInstruction& instruction) {
    if (!instruction.shape().IsArray()) {
      Error(std::string(instruction.opcode_name()) + " must have an array shape, has " +
            instruction.shape().ToString());
      return false;
    }
    for (const HloInstruction* operand : instruction.operands()) {
      if (!operand->shape().IsArray()) {
        Error(std::string(instruction.opcode_name()) + " operand '" + operand->name() + "' must be an array, is " +
              operand->shape().ToString());
        return false;
      }
    }
    return true;
  }

  void ExpectShape(const HloInstruction& instruction, const Shape& inferred) {
    if (!SameShape(instruction.shape(), inferred)) {
      Error(std::string(instruction.opcode_name()) + " has shape " + instruction.shape().ToString(false) +
            " but its operands give " + inferred.ToString(false));
    }
  }

  // Each of `dims` in [0, rank) and no repeats.
  bool ExpectDimensions(const std::string& what, const std::vector<int64_t>& dims, int rank) {
    std::unordered_set<int64_t> seen;
    for (int64_t d : dims) {
      if (d < 0 || d >= rank) {
        Error(what + "=" + Join(dims) + " out of range for rank " + std::to_string(rank));
        return false;
      }
      if (!seen.insert(d).second) {
        Error(what + "=" + Join(dims) + " repeats dimension " + std::to_string(d));
        return false;
      }
    }
    return true;
  }

  // The start indices of dynamic-slice and dynamic-update-slice, from operand
  // `first` on: one integer scalar per dimension of `operand`, or (XLA's older
  // form) a single integer vector of that length.
  bool ExpectStartIndices(const HloInstruction& instruction, int first, const Shape& operand) {
    const std::string op(instruction.opcode_name());
    int count = instruction.operand_count() - first;
    auto integral = [](const Shape& s) { return IsIntegralType(s.element_type()); };
    if (count == 1 && instruction.operand(first)->shape().rank() == 1) {
      const Shape& index = instruction.operand(first)->shape();
      if (!integral(index) || index.dim(0) != operand.rank()) {
        Error(op + " start index vector " + index.ToString(false) + " must hold " +
              std::to_string(operand.rank()) + " integer(s)");
        return false;
      }
      return true;
    }
    if (count != operand.rank()) {
      Error(op + " takes " + std::to_string(operand.rank()) + " start index operand(s) for " +
            operand.ToString(false) + ", has " + std::to_string(count));
      return false;
    }
    for (int i = first; i < instruction.operand_count(); ++i) {
      const Shape& index = instruction.operand(i)->shape();
      if (index.rank() != 0 || !integral(index)) {
        Error(op + " start index '" + instruction.operand(i)->name() + "' must be an integer " +
              "scalar, is " + index.ToString(false));
        return false;
      }
    }
    return true;
  }

  // A reduction computation (reduce's to_apply) for operands of element
  // types `types`: 2n scalar parameters, the i-th and (n+i)-th of operand
  // i's type, returning n scalars of those types. Exactly, as XLA's HLO
  // verifier wants ("Shape mismatch between to_apply computation parameter
  // and operand"); only the initial values may differ in floating precision.
  void ExpectReducer(const HloComputation& reducer, const std::vector<PrimitiveType>& types) {
    const size_t n = types.size();
    std::vector<HloInstruction*> parameters = reducer.parameters();
    if (parameters.size() != 2 * n) {
      return Error("reduction computation '" + reducer.name() + "' takes " +
                   std::to_string(parameters.size()) + " parameter(s), needs " +
                   std::to_string(2 * n));
    }
    for (size_t i = 0; i < 2 * n; ++i) {
      const Shape& p = parameters[i]->shape();
      if (!p.IsArray() || p.rank() != 0 || p.element_type() != types[i % n]) {
        return Error("reduction computation '" + reducer.name() + "' parameter " +
                     std::to_string(i) + " is " + p.ToString(false) + ", but the values " +
                     "reduced are " + std::string(PrimitiveTypeName(types[i % n])));
      }
    }
    if (reducer.root() == nullptr) return;
    const Shape& root = reducer.root()->shape();
    std::vector<Shape> results = n == 1 ? std::vector<Shape>{root}
                                        : (root.IsTuple() ? root.tuple_shapes()
                                                          : std::vector<Shape>{});
    bool fits = results.size() == n;
    for (size_t i = 0; fits && i < n; ++i) {
      fits = results[i].IsArray() && results[i].rank() == 0 &&
             results[i].element_type() == types[i];
    }
    if (!fits) {
      Error("reduction computation '" + reducer.name() + "' returns " + root.ToString(false) +
            ", not " + std::to_string(n) + " scalar(s) of the reduced values' types");
    }
  }

  const HloComputation* Callee(const HloInstruction& instruction, const char* key) {
    const HloComputation* callee = instruction.CalledComputation(key);
    if (callee == nullptr) Error(std::string(instruction.opcode_name()) + " needs a '" + key + "' computation");
    return callee;
  }

  // The operand count XLA's parser takes for the opcode. False when it is
  // wrong: the shape rules would read operands that are not there.
  bool VerifyOperandCount(const HloInstruction& instruction) {
    const std::string op(instruction.opcode_name());
    const int n = instruction.operand_count();
    if (instruction.Is(HloOpcode::kConditional)) {
      // (predicate or branch index, one operand per branch)
      int branches = -1;
      if (const HloAttribute* list = instruction.FindAttribute("branch_computations")) {
        branches = static_cast<int>(list->computations.size());
      } else if (instruction.HasAttribute("true_computation") ||
                 instruction.HasAttribute("false_computation")) {
        branches = 2;
      }
      if (branches >= 0 && n != branches + 1) {
        Error("conditional with " + std::to_string(branches) + " branches takes " +
              std::to_string(branches + 1) + " operand(s), has " + std::to_string(n));
        return false;
      }
      return true;
    }
    std::optional<verifier_internal::Arity> arity = ArityFor(instruction.opcode());
    if (!arity) return true;
    bool fits = n >= arity->min && (arity->max < 0 || n <= arity->max) &&
                (!arity->pairs || n % 2 == 0) && (!arity->odd || n % 2 == 1);
    if (fits) return true;
    std::string wanted = arity->max == arity->min ? std::to_string(arity->min)
                         : arity->pairs           ? "an even number (at least " +
                                                  std::to_string(arity->min) + ") of"
                         : arity->odd             ? "an odd number (at least " +
                                                std::to_string(arity->min) + ") of"
                                                  : "at least " + std::to_string(arity->min);
    Error(op + " takes " + wanted + " operand(s), has " + std::to_string(n));
    return false;
  }

  void VerifyAttributeNames(const HloInstruction& instruction) {
    for (const HloAttribute& attribute : instruction.attributes()) {
      if (!AttributeAllowed(instruction.opcode(), attribute.key)) {
        Error(std::string(instruction.opcode_name()) + " has no attribute '" + attribute.key + "'");
      }
    }
  }

  // Operand counts XLA's parser insists on for opcodes whose shape rule
  // exla does not check (or checks only after other early returns): passes
  // index operands by position, so a missing one must not get that far (a
  // one-operand dynamic-update-slice crashed the splitter).
  static std::optional<int> FixedArity(HloOpcode opcode) {
    switch (opcode) {
      case HloOpcode::kIota:
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
        return 0;
      case HloOpcode::kBitcast:
      case HloOpcode::kBitcastConvert:
      case HloOpcode::kReal:
      case HloOpcode::kImag:
      case HloOpcode::kReducePrecision:
      case HloOpcode::kCholesky:
      case HloOpcode::kFft:
      case HloOpcode::kGetDimensionSize:
        return 1;
      case HloOpcode::kPad:
      case HloOpcode::kGather:
      case HloOpcode::kComplex:
      case HloOpcode::kTriangularSolve:
      case HloOpcode::kAddDependency:
      case HloOpcode::kSetDimensionSize:
        return 2;
      default:
        return std::nullopt;
    }
  }

  // `{1,2}` or `7` of an attribute the parser keeps as text; nothing if it
  // is absent or not a plain list of integers.
  static std::optional<std::vector<int64_t>> RawIntList(const HloInstruction& instruction,
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

  // The dimension numbers of scatter and gather (whose shapes exla does not
  // infer) name dimensions their operands have, each once, as XLA requires.
  bool VerifyDimensionNumbers(const HloInstruction& instruction) {
    const bool scatter = instruction.Is(HloOpcode::kScatter);
    int count = instruction.operand_count();
    if (scatter ? (count < 3 || count % 2 == 0) : count != 2) {
      Error(std::string(instruction.opcode_name()) + (scatter ? " takes operands, indices and "
            "as many updates as operands" : " takes 2 operand(s)") + ", has " +
            std::to_string(count));
      return false;
    }
    for (const HloInstruction* operand : instruction.operands()) {
      if (!operand->shape().IsArray()) return true;  // reported elsewhere, or not checked
    }
    const int operand_rank = instruction.operand(0)->shape().rank();
    const int indices_rank = instruction.operand(scatter ? count / 2 : 1)->shape().rank();
    struct Field {
      const char* key;
      int rank;
    };
    std::vector<Field> fields;
    if (scatter) {
      const int updates_rank = instruction.operand(count / 2 + 1)->shape().rank();
      fields = {{"update_window_dims", updates_rank},
                {"inserted_window_dims", operand_rank},
                {"scatter_dims_to_operand_dims", operand_rank},
                {"input_batching_dims", operand_rank},
                {"scatter_indices_batching_dims", indices_rank}};
    } else {
      if (!instruction.shape().IsArray()) return true;
      fields = {{"offset_dims", instruction.shape().rank()},
                {"collapsed_slice_dims", operand_rank},
                {"start_index_map", operand_rank},
                {"operand_batching_dims", operand_rank},
                {"start_indices_batching_dims", indices_rank}};
      std::optional<std::vector<int64_t>> sizes = RawIntList(instruction, "slice_sizes");
      if (sizes && static_cast<int>(sizes->size()) != operand_rank) {
        Error("gather slice_sizes=" + Join(*sizes) + " must give one size per operand "
              "dimension (" + std::to_string(operand_rank) + ")");
        return false;
      }
    }
    for (const Field& field : fields) {
      std::optional<std::vector<int64_t>> dims = RawIntList(instruction, field.key);
      if (dims && !ExpectDimensions(std::string(instruction.opcode_name()) + " " + field.key,
                                    *dims, field.rank)) {
        return false;
      }
    }
    std::optional<std::vector<int64_t>> index_vector_dim =
        RawIntList(instruction, "index_vector_dim");
    if (index_vector_dim && index_vector_dim->size() == 1 &&
        (*index_vector_dim)[0] > indices_rank) {
      Error(std::string(instruction.opcode_name()) + " index_vector_dim=" +
            std::to_string((*index_vector_dim)[0]) + " out of range for indices of rank " +
            std::to_string(indices_rank));
      return false;
    }
    return true;
  }

  void VerifyInstruction(const HloInstruction& instruction) {
    VerifyAttributeNames(instruction);
    if (!VerifyOperandCount(instruction)) return;
    if (std::optional<int> arity = FixedArity(instruction.opcode())) {
      if (!ExpectOperands(instruction, *arity)) return;
    }
    if (instruction.Is(HloOpcode::kBitcast) && !ExpectArrays(instruction)) return;
    if (instruction.Is(HloOpcode::kTopK)) {
      // topk(x), k=K: (x's type [..., K], s32[..., K]).
      if (!ExpectOperands(instruction, 1)) return;
      const Shape& in = instruction.operand(0)->shape();
      const Shape& out = instruction.shape();
      std::optional<std::vector<int64_t>> k = RawIntList(instruction, "k");
      if (!in.IsArray() || in.rank() == 0 || !k || k->size() != 1) {
        return Error("topk needs an array operand of rank 1 or more and k=<integer>");
      }
      std::vector<int64_t> dims = in.dims();
      dims.back() = (*k)[0];
      Shape inferred = Shape::Tuple({Shape::Array(in.element_type(), dims),
                                     Shape::Array(PrimitiveType::kS32, dims)});
      if (!SameShape(out, inferred)) {
        return Error("topk has shape " + out.ToString(false) + " but its operand gives " +
                     inferred.ToString(false));
      }
    }
    if (instruction.Is(HloOpcode::kScatter) || instruction.Is(HloOpcode::kGather)) {
      if (!VerifyDimensionNumbers(instruction)) return;
    }
    if (instruction.Is(HloOpcode::kSetDimensionSize) ||
        instruction.Is(HloOpcode::kGetDimensionSize)) {
      // dimensions={d}: one dimension of the operand (the arity is checked above).
      if (!instruction.operand(0)->shape().IsArray()) {
        return Error(std::string(instruction.opcode_name()) + " operand must be an array");
      }
      std::vector<int64_t> dims = instruction.dimensions();
      if (dims.size() != 1) {
        return Error(std::string(instruction.opcode_name()) + " needs one dimension, has " +
                     Join(dims));
      }
      if (!ExpectDimensions(std::string(instruction.opcode_name()) + " dimensions", dims,
                            instruction.operand(0)->shape().rank())) {
        return;
      }
    }
    int minimum = instruction.Is(HloOpcode::kDynamicUpdateSlice) ? 2
                  : instruction.Is(HloOpcode::kDynamicSlice) || instruction.Is(HloOpcode::kConcatenate)
                      ? 1
                      : 0;
    if (instruction.operand_count() < minimum) {
      return Error(std::string(instruction.opcode_name()) + " takes at least " +
                   std::to_string(minimum) + " operand(s), has " +
                   std::to_string(instruction.operand_count()));
    }
    if (!VerifyShapeDimensions(instruction.shape())) return;
    for (const HloInstruction* operand : instruction.operands()) {
      if (HasDynamicDimension(operand->shape())) return;  // shape rules for static shapes only
      // An operand's invalid shape is reported where it is defined.
      if (!CheckedByteSize(operand->shape()).has_value()) return;
    }
    if (HasDynamicDimension(instruction.shape())) return;
    VerifyShapeRule(instruction);
  }

  void VerifyShapeRule(const HloInstruction& instruction) {
    const Shape& shape = instruction.shape();
    const Rule rule = RuleFor(instruction.opcode());
    const std::string op(instruction.opcode_name());
    auto operand_shape = [&](int i) -> const Shape& { return instruction.operand(i)->shape(); };
    switch (rule) {
      case Rule::kUnknown:
        return;
      case Rule::kParameter: {
        // XLA's parser: one entry per array leaf of the parameter's shape.
        std::optional<std::string> replication = instruction.RawAttribute("parameter_replication");
        if (!replication) return;
        // `{true,false}`: each entry exactly true or false, as XLA's parser reads them.
        std::string list = *replication;
        if (list.size() < 2 || list.front() != '{' || list.back() != '}') {
          return Error("parameter_replication=" + list + " is not a {true,false,...} list");
        }
        list = list.substr(1, list.size() - 2);
        int64_t entries = 0;
        const bool empty = list.find_first_not_of(' ') == std::string::npos;
        for (size_t start = 0; !empty;) {
          const size_t comma = list.find(',', start);
          std::string entry = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                            : comma - start);
          entry.erase(0, entry.find_first_not_of(' '));
          entry.erase(entry.find_last_not_of(' ') + 1);
          if (entry != "true" && entry != "false") {
            return Error("parameter_replication entry '" + entry + "' is neither true nor false");
          }
          ++entries;
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        if (entries != LeafCount(shape)) {
          return Error("parameter has " + std::to_string(LeafCount(shape)) + " leaf buffer(s) "
                       "but parameter_replication has " + std::to_string(entries) + " element(s)");
        }
        return;
      }
      case Rule::kConstant: {
        if (std::optional<std::string> token =
                LiteralTokenError(instruction.payload(), shape.element_type())) {
          return Error("constant literal has " + *token);
        }
        if (!shape.IsArray() || IsComplexType(shape.element_type())) return;
        if (std::optional<std::string> value = LiteralValueError(instruction.payload(), shape.element_type())) {
          return Error("constant literal has " + *value);  // XLA's parser refuses it
        }
        int64_t count = LiteralElementCount(instruction.payload());
        if (count >= 0 && count != shape.ElementCount()) {
          return Error("constant literal has " + std::to_string(count) +
                       " element(s) but its shape " + shape.ToString(false) + " holds " +
                       std::to_string(shape.ElementCount()));
        }
        if (std::optional<std::string> nesting = LiteralNestingError(instruction.payload(), shape)) {
          Error("constant literal has " + *nesting);
        }
        return;
      }
      case Rule::kUnary:
      case Rule::kUnaryToPred:
      case Rule::kConvert: {
        if (!ExpectOperands(instruction, 1) || !ExpectArrays(instruction)) return;
        Shape inferred = operand_shape(0);
        if (rule == Rule::kUnaryToPred) inferred.set_element_type(PrimitiveType::kPred);
        // convert changes the type; abs of a complex number is real.
        if (rule == Rule::kConvert || IsComplexType(inferred.element_type())) {
          inferred.set_element_type(shape.element_type());
        }
        return ExpectShape(instruction, inferred);
      }
      case Rule::kBinary:
      case Rule::kCompare: {
        if (!ExpectOperands(instruction, 2) || !ExpectArrays(instruction)) return;
        if (!SameShape(operand_shape(0), operand_shape(1))) {
          return Error(op + " operands differ: " + operand_shape(0).ToString(false) + " vs " +
                       operand_shape(1).ToString(false));
        }
        if (rule == Rule::kCompare && !instruction.comparison_direction().has_value()) {
          return Error("compare needs a direction (EQ, NE, LT, LE, GT or GE)");
        }
        Shape inferred = operand_shape(0);
        if (rule == Rule::kCompare) inferred.set_element_type(PrimitiveType::kPred);
        return ExpectShape(instruction, inferred);
      }
      case Rule::kSelect:
      case Rule::kClamp: {
        if (!ExpectOperands(instruction, 3) || !ExpectArrays(instruction)) return;
        // select(pred, on_true, on_false); clamp(min, operand, max).
        const Shape& value = operand_shape(1);
        const Shape& other = operand_shape(rule == Rule::kSelect ? 2 : 0);
        const Shape& extra = operand_shape(rule == Rule::kSelect ? 0 : 2);
        if (rule == Rule::kSelect) {
          if (!SameShape(value, other)) {
            return Error("select branches differ: " + value.ToString(false) + " vs " +
                         other.ToString(false));
          }
          if (extra.element_type() != PrimitiveType::kPred ||
              (extra.rank() != 0 && extra.dims() != value.dims())) {
            return Error("select predicate " + extra.ToString(false) +
                         " must be pred of the branches' dimensions");
          }
        } else {
          for (const Shape* bound : {&other, &extra}) {
            if (bound->rank() != 0 && !SameShape(*bound, value)) {
              return Error("clamp bound " + bound->ToString(false) +
                           " must be a scalar or match " + value.ToString(false));
            }
          }
        }
        return ExpectShape(instruction, value);
      }
      case Rule::kBroadcast: {
        if (!ExpectOperands(instruction, 1) || !ExpectArrays(instruction)) return;
        std::vector<int64_t> dims = instruction.dimensions();
        if (static_cast<int>(dims.size()) != operand_shape(0).rank()) {
          return Error("broadcast dimensions=" + Join(dims) + " must name one result dimension" +
                       " per operand dimension (" + std::to_string(operand_shape(0).rank()) + ")");
        }
        if (!ExpectDimensions("broadcast dimensions", dims, shape.rank())) return;
        for (size_t i = 0; i < dims.size(); ++i) {
          if (shape.dim(static_cast<int>(dims[i])) != operand_shape(0).dim(static_cast<int>(i))) {
            return Error("broadcast maps operand dimension " + std::to_string(i) + " (size " +
                         std::to_string(operand_shape(0).dim(static_cast<int>(i))) +
                         ") to result dimension " + std::to_string(dims[i]) + " (size " +
                         std::to_string(shape.dim(static_cast<int>(dims[i]))) + ")");
          }
        }
        if (shape.element_type() != operand_shape(0).element_type()) {
          return Error("broadcast changes the element type");
        }
        return;
      }
      case Rule::kReshape: {
        if (!ExpectOperands(instruction, 1) || !ExpectArrays(instruction)) return;
        if (shape.ElementCount() != operand_shape(0).ElementCount() ||
            shape.element_type() != operand_shape(0).element_type()) {
          return Error("reshape of " + operand_shape(0).ToString(false) + " to " +
                       shape.ToString(false) + " changes the element count or type");
        }
        return;
      }
      case Rule::kTranspose:
      case Rule::kReverse: {
        if (!ExpectOperands(instruction, 1) || !ExpectArrays(instruction)) return;
        std::vector<int64_t> dims = instruction.dimensions();
        const Shape& in = operand_shape(0);
        if (!ExpectDimensions(op + " dimensions", dims, in.rank())) return;
        Shape inferred = in;
        if (rule == Rule::kTranspose) {
          if (static_cast<int>(dims.size()) != in.rank()) {
            return Error("transpose dimensions=" + Join(dims) + " is not a permutation of " +
                         std::to_string(in.rank()) + " dimensions");
          }
          for (size_t i = 0; i < dims.size(); ++i) {
            inferred.set_dim(static_cast<int>(i), in.dim(static_cast<int>(dims[i])));
          }
        }
        return ExpectShape(instruction, inferred);
      }
      case Rule::kSlice: {
        if (!ExpectOperands(instruction, 1) || !ExpectArrays(instruction)) return;
        const Shape& in = operand_shape(0);
        std::vector<SliceBounds> bounds = instruction.slice();
        if (static_cast<int>(bounds.size()) != in.rank()) {
          return Error("slice gives " + std::to_string(bounds.size()) + " bound(s) for rank " +
                       std::to_string(in.rank()));
        }
        Shape inferred = in;
        for (int i = 0; i < in.rank(); ++i) {
          const SliceBounds& b = bounds[i];
          if (b.start < 0 || b.start > b.limit || b.limit > in.dim(i) || b.stride < 1) {
            return Error("slice bounds [" + std::to_string(b.start) + ":" +
                         std::to_string(b.limit) + ":" + std::to_string(b.stride) +
                         "] out of range for dimension " + std::to_string(i) + " of size " +
                         std::to_string(in.dim(i)));
          }
          inferred.set_dim(i, (b.limit - b.start + b.stride - 1) / b.stride);
        }
        return ExpectShape(instruction, inferred);
      }
      case Rule::kDynamicSlice: {
        if (!ExpectArrays(instruction) || instruction.operand_count() < 1) return;
        const Shape& in = operand_shape(0);
        if (!ExpectStartIndices(instruction, 1, in)) return;
        std::vector<int64_t> sizes = instruction.IntListAttribute("dynamic_slice_sizes");
        if (static_cast<int>(sizes.size()) != in.rank()) {
          return Error("dynamic_slice_sizes=" + Join(sizes) + " does not match rank " +
                       std::to_string(in.rank()));
        }
        Shape inferred = in;
        for (int i = 0; i < in.rank(); ++i) {
          if (sizes[i] < 0 || sizes[i] > in.dim(i)) {
            return Error("dynamic_slice_sizes=" + Join(sizes) + " exceeds the operand " +
                         in.ToString(false));
          }
          inferred.set_dim(i, sizes[i]);
        }
        return ExpectShape(instruction, inferred);
      }
      case Rule::kDynamicUpdateSlice: {
        if (!ExpectArrays(instruction) || instruction.operand_count() < 2) return;
        const Shape& in = operand_shape(0);
        const Shape& update = operand_shape(1);
        if (!ExpectStartIndices(instruction, 2, in)) return;
        if (update.rank() != in.rank()) {
          return Error("dynamic-update-slice update " + update.ToString(false) +
                       " has another rank than the operand " + in.ToString(false));
        }
        for (int i = 0; i < in.rank(); ++i) {
          if (update.dim(i) > in.dim(i)) {
            return Error("dynamic-update-slice update " + update.ToString(false) +
                         " is larger than the operand " + in.ToString(false));
          }
        }
        return ExpectShape(instruction, in);
      }
      case Rule::kConcatenate: {
        if (instruction.operand_count() < 1 || !ExpectArrays(instruction)) return;
        std::vector<int64_t> dims = instruction.dimensions();
        const Shape& first = operand_shape(0);
        if (dims.size() != 1) return Error("concatenate needs one dimension, has " + Join(dims));
        if (!ExpectDimensions("concatenate dimensions", dims, first.rank())) return;
        Shape inferred = first;
        for (int i = 1; i < instruction.operand_count(); ++i) {
          const Shape& next = operand_shape(i);
          bool fits = next.rank() == first.rank() && next.element_type() == first.element_type();
          for (int d = 0; fits && d < first.rank(); ++d) {
            fits = d == dims[0] || next.dim(d) == first.dim(d);
          }
          if (!fits) {
            return Error("concatenate operands " + first.ToString(false) + " and " +
                         next.ToString(false) + " differ outside dimension " +
                         std::to_string(dims[0]));
          }
          inferred.set_dim(static_cast<int>(dims[0]),
                           inferred.dim(static_cast<int>(dims[0])) + next.dim(static_cast<int>(dims[0])));
        }
        return ExpectShape(instruction, inferred);
      }
      case Rule::kIota: {
        std::optional<int64_t> dim = instruction.IntAttribute("iota_dimension");
        if (!shape.IsArray() || !dim || *dim < 0 || *dim >= shape.rank()) {
          return Error("iota_dimension out of range for " + shape.ToString(false));
        }
        return;
      }
      case Rule::kDot: {
        if (!ExpectOperands(instruction, 2) || !ExpectArrays(instruction)) return;
        const Shape& lhs = operand_shape(0);
        const Shape& rhs = operand_shape(1);
        DotDimensions d = instruction.dot_dimensions();
        std::vector<int64_t> lhs_all = d.lhs_batch, rhs_all = d.rhs_batch;
        lhs_all.insert(lhs_all.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
        rhs_all.insert(rhs_all.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
        if (!ExpectDimensions("dot lhs batch and contracting dims", lhs_all, lhs.rank()) ||
            !ExpectDimensions("dot rhs batch and contracting dims", rhs_all, rhs.rank())) {
          return;
        }
        if (d.lhs_batch.size() != d.rhs_batch.size() ||
            d.lhs_contracting.size() != d.rhs_contracting.size()) {
          return Error("dot has unequal numbers of lhs and rhs batch or contracting dimensions");
        }
        for (size_t i = 0; i < lhs_all.size(); ++i) {
          if (lhs.dim(static_cast<int>(lhs_all[i])) != rhs.dim(static_cast<int>(rhs_all[i]))) {
            return Error("dot pairs lhs dimension " + std::to_string(lhs_all[i]) + " (size " +
                         std::to_string(lhs.dim(static_cast<int>(lhs_all[i]))) +
                         ") with rhs dimension " + std::to_string(rhs_all[i]) + " (size " +
                         std::to_string(rhs.dim(static_cast<int>(rhs_all[i]))) + ")");
          }
        }
        // The result type may differ (preferred_element_type): compare dimensions.
        Shape inferred = InferDotShape(lhs, rhs, d, shape.element_type());
        return ExpectShape(instruction, inferred);
      }
      case Rule::kReduce: {
        int n = instruction.operand_count() / 2;
        if (instruction.operand_count() % 2 != 0 || n == 0) {
          return Error("reduce needs pairs of operands and initial values, has " +
                       std::to_string(instruction.operand_count()) + " operand(s)");
        }
        const HloComputation* reducer = Callee(instruction, "to_apply");
        if (reducer == nullptr) return;
        std::vector<PrimitiveType> types;
        for (int i = 0; i < n; ++i) {
          PrimitiveType in = operand_shape(i).element_type();
          PrimitiveType init = operand_shape(n + i).element_type();
          if (in != init && !(IsFloatingPointType(in) && IsFloatingPointType(init))) {
            return Error("reduce operand " + std::to_string(i) + " is " +
                         operand_shape(i).ToString(false) + " but its initial value is " +
                         operand_shape(n + i).ToString(false));
          }
          types.push_back(in);
        }
        ExpectReducer(*reducer, types);
        std::vector<Shape> results;
        std::vector<int64_t> dims = instruction.dimensions();
        for (int i = 0; i < n; ++i) {
          const Shape& in = operand_shape(i);
          if (!in.IsArray()) return Error("reduce operands must be arrays");
          if (!ExpectDimensions("reduce dimensions", dims, in.rank())) return;
          std::vector<int64_t> kept;
          for (int k = 0; k < in.rank(); ++k) {
            if (std::find(dims.begin(), dims.end(), k) == dims.end()) kept.push_back(in.dim(k));
          }
          // XLA takes the result type from the computation's result (it may be
          // wider than the initial value: bf16 values summed in f32).
          PrimitiveType type = operand_shape(n + i).element_type();
          if (const HloInstruction* root = reducer->root()) {
            const Shape& r = root->shape();
            if (n == 1 && r.IsArray()) type = r.element_type();
            if (n > 1 && r.IsTuple() && static_cast<int>(r.tuple_shapes().size()) == n &&
                r.tuple_shape(i).IsArray()) {
              type = r.tuple_shape(i).element_type();
            }
          }
          results.push_back(Shape::Array(type, kept));
        }
        return ExpectShape(instruction, n == 1 ? results[0] : Shape::Tuple(results));
      }
      case Rule::kSort: {
        // sort(keys, values...): every operand sorted along one dimension.
        if (Callee(instruction, "to_apply") == nullptr) return;
        if (instruction.operand_count() == 0) return Error("sort needs at least one operand");
        std::vector<Shape> results;
        for (int i = 0; i < instruction.operand_count(); ++i) {
          const Shape& in = operand_shape(i);
          if (!in.IsArray()) return Error("sort operands must be arrays");
          if (in.dims() != operand_shape(0).dims()) {
            return Error("sort operands differ: " + operand_shape(0).ToString(false) + " vs " +
                         in.ToString(false));
          }
          results.push_back(in);
        }
        // The comparator takes two scalars of each operand's type, in order,
        // and returns pred[] (XLA: "comparator block argument #i").
        const HloComputation* comparator = instruction.CalledComputation("to_apply");
        std::vector<HloInstruction*> parameters = comparator->parameters();
        if (parameters.size() != 2 * results.size()) {
          return Error("sort comparator '" + comparator->name() + "' takes " +
                       std::to_string(parameters.size()) + " parameter(s), needs " +
                       std::to_string(2 * results.size()));
        }
        for (size_t i = 0; i < parameters.size(); ++i) {
          const Shape& p = parameters[i]->shape();
          PrimitiveType want = results[i / 2].element_type();
          if (!p.IsArray() || p.rank() != 0 || p.element_type() != want) {
            return Error("sort comparator '" + comparator->name() + "' parameter " +
                         std::to_string(i) + " is " + p.ToString(false) + ", not a scalar of " +
                         "operand " + std::to_string(i / 2) + "'s type");
          }
        }
        if (comparator->root() &&
            !SameShape(comparator->root()->shape(), Shape::Array(PrimitiveType::kPred, {}))) {
          return Error("sort comparator '" + comparator->name() + "' must return pred[]");
        }
        std::vector<int64_t> dims = instruction.dimensions();
        if (dims.size() != 1) return Error("sort needs one dimension, has " + Join(dims));
        if (!ExpectDimensions("sort dimensions", dims, operand_shape(0).rank())) return;
        return ExpectShape(instruction, results.size() == 1 ? results[0] : Shape::Tuple(results));
      }
      case Rule::kBatchNorm: {
        // training(x, scale, offset) -> (x, mean, variance);
        // inference(x, scale, offset, mean, variance) -> x;
        // grad(x, scale, mean, variance, grad_y) -> (grad_x, grad_scale, grad_offset).
        for (const HloInstruction* operand : instruction.operands()) {
          if (!operand->shape().IsArray()) return Error(op + " operands must be arrays");
        }
        const Shape& x = operand_shape(0);
        // feature_index is carried as raw text (no pass decodes it).
        std::optional<int64_t> feature;
        if (std::optional<std::string> raw = instruction.RawAttribute("feature_index")) {
          char* end = nullptr;
          long long value = std::strtoll(raw->c_str(), &end, 10);
          if (!raw->empty() && end != nullptr && *end == '\0') feature = value;
        }
        if (!feature || *feature < 0 || *feature >= x.rank()) {
          return Error(op + " feature_index out of range for " + x.ToString(false));
        }
        Shape per_feature = Shape::Array(x.element_type(), {x.dim(static_cast<int>(*feature))});
        const bool grad = instruction.Is(HloOpcode::kBatchNormGrad);
        for (int i = 1; i < instruction.operand_count(); ++i) {
          const Shape& expected = grad && i == 4 ? x : per_feature;
          if (!SameShape(operand_shape(i), expected)) {
            return Error(op + " operand " + std::to_string(i) + " is " +
                         operand_shape(i).ToString(false) + ", not " + expected.ToString(false));
          }
        }
        if (instruction.Is(HloOpcode::kBatchNormInference)) return ExpectShape(instruction, x);
        return ExpectShape(instruction, Shape::Tuple({x, per_feature, per_feature}));
      }
      case Rule::kTuple: {
        std::vector<Shape> elements;
        for (const HloInstruction* operand : instruction.operands()) {
          elements.push_back(operand->shape());
        }
        return ExpectShape(instruction, Shape::Tuple(elements));
      }
      case Rule::kGetTupleElement: {
        if (!ExpectOperands(instruction, 1)) return;
        std::optional<int64_t> index = instruction.IntAttribute("index");
        const Shape& tuple = operand_shape(0);
        if (!tuple.IsTuple() || !index || *index < 0 ||
            *index >= static_cast<int64_t>(tuple.tuple_shapes().size())) {
          return Error("get-tuple-element index out of range for " + tuple.ToString(false));
        }
        return ExpectShape(instruction, tuple.tuple_shape(static_cast<int>(*index)));
      }
      case Rule::kWhile: {
        if (!ExpectOperands(instruction, 1)) return;
        const HloComputation* body = Callee(instruction, "body");
        const HloComputation* condition = Callee(instruction, "condition");
        if (body == nullptr || condition == nullptr) return;
        ExpectShape(instruction, operand_shape(0));
        for (const HloComputation* callee : {body, condition}) {
          std::vector<HloInstruction*> parameters = callee->parameters();
          if (parameters.size() != 1 || !SameShape(parameters[0]->shape(), shape)) {
            return Error("while " + std::string(callee == body ? "body" : "condition") + " '" +
                         callee->name() + "' must take one parameter of shape " +
                         shape.ToString(false));
          }
        }
        if (body->root() && !SameShape(body->root()->shape(), shape)) {
          return Error("while body '" + body->name() + "' returns " +
                       body->root()->shape().ToString(false) + ", not " + shape.ToString(false));
        }
        if (condition->root() &&
            !SameShape(condition->root()->shape(), Shape::Array(PrimitiveType::kPred, {}))) {
          return Error("while condition '" + condition->name() + "' must return pred[]");
        }
        return;
      }
      case Rule::kCall: {
        const HloComputation* callee = Callee(instruction, "to_apply");
        if (callee == nullptr) return;
        std::vector<HloInstruction*> parameters = callee->parameters();
        if (static_cast<int>(parameters.size()) != instruction.operand_count()) {
          return Error("call passes " + std::to_string(instruction.operand_count()) +
                       " operand(s) to '" + callee->name() + "', which takes " +
                       std::to_string(parameters.size()));
        }
        for (size_t i = 0; i < parameters.size(); ++i) {
          if (!SameShape(parameters[i]->shape(), operand_shape(static_cast<int>(i)))) {
            return Error("call operand " + std::to_string(i) + " is " +
                         operand_shape(static_cast<int>(i)).ToString(false) + " but '" +
                         callee->name() + "' takes " + parameters[i]->shape().ToString(false));
          }
        }
        if (callee->root()) ExpectShape(instruction, callee->root()->shape());
        return;
      }
    }
  }

  const HloModule& module_;
  const HloComputation* computation_ = nullptr;
  const HloInstruction* instruction_ = nullptr;
  std::vector<VerifierError> errors_;
};

}  // namespace

std::string VerifierError::ToString() const {
  std::string where;
  if (!computation.empty()) where = "computation '" + computation + "'";
  if (!instruction.empty()) where += (where.empty() ? "" : ", ") + ("instruction '" + instruction + "'");
  return where.empty() ? message : where + ": " + message;
}

std::vector<VerifierError> VerifyModule(const HloModule& module) {
  return Verifier(module).Run();
}

void VerifyModuleOrThrow(const HloModule& module, std::string_view text) {
  std::vector<VerifierError> errors = VerifyModule(module);
  if (errors.empty()) return;
  constexpr size_t kShown = 5;
  std::string message = "invalid HLO module: ";
  for (size_t i = 0; i < errors.size() && i < kShown; ++i) {
    const VerifierError& error = errors[i];
    std::string position =
        verifier_internal::DefinitionPosition(text, error.computation, error.instruction);
    message += (i ? "; " : "") + position + error.ToString();
  }
  if (errors.size() > kShown) {
    message += "; and " + std::to_string(errors.size() - kShown) + " more";
  }
  throw std::invalid_argument(message);
}

}  // namespace exla
