#include "ir/verifier.h"

#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "ir/verifier_checks.h"
#include "ir/verifier_rules.h"
#include "ir/verifier_structure.h"

namespace exla {
namespace {

using verifier_internal::ArityFor;
using verifier_internal::AttributeAllowed;
using verifier_internal::CheckedByteSize;
using verifier_internal::HasDynamicDimension;
using verifier_internal::InstructionCheck;
using verifier_internal::Rule;
using verifier_internal::RuleFor;
using verifier_internal::ShapeRule;
using verifier_internal::ShapeRuleFor;

// Operand counts XLA's parser insists on for opcodes whose shape rule
// exla does not check (or checks only after other early returns): passes
// index operands by position, so a missing one must not get that far (a
// one-operand dynamic-update-slice crashed the splitter).
std::optional<int> FixedArity(HloOpcode opcode) {
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

// The fewest operands the shape rules of dynamic-update-slice,
// dynamic-slice and concatenate read.
int MinimumOperands(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kDynamicUpdateSlice)) return 2;
  if (instruction.Is(HloOpcode::kDynamicSlice) || instruction.Is(HloOpcode::kConcatenate)) {
    return 1;
  }
  return 0;
}

// Whether the shape rules may run: they are for static shapes, and an
// operand's invalid shape is reported where it is defined.
bool ShapeRulesApply(const HloInstruction& instruction) {
  for (const HloInstruction* operand : instruction.operands()) {
    if (HasDynamicDimension(operand->shape())) return false;
    if (!CheckedByteSize(operand->shape()).has_value()) return false;
  }
  return !HasDynamicDimension(instruction.shape());
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

  // The operand count XLA's parser takes for the opcode. False when it is
  // wrong: the shape rules would read operands that are not there.
  bool VerifyOperandCount(const HloInstruction& instruction) {
    if (instruction.Is(HloOpcode::kConditional)) return VerifyConditionalOperandCount(instruction);
    const int n = instruction.operand_count();
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
    Error(std::string(instruction.opcode_name()) + " takes " + wanted + " operand(s), has " +
          std::to_string(n));
    return false;
  }

  // A conditional takes its predicate or branch index and one operand per
  // branch.
  bool VerifyConditionalOperandCount(const HloInstruction& instruction) {
    const int n = instruction.operand_count();
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

  void VerifyAttributeNames(const HloInstruction& instruction) {
    for (const HloAttribute& attribute : instruction.attributes()) {
      if (!AttributeAllowed(instruction.opcode(), attribute.key)) {
        Error(std::string(instruction.opcode_name()) + " has no attribute '" + attribute.key + "'");
      }
    }
  }

  // The checks of opcodes without a shape rule that must hold before the
  // generic checks read operands; false when one failed.
  static bool VerifyOperandsPresent(const InstructionCheck& check) {
    const HloInstruction& instruction = check.instruction();
    if (std::optional<int> arity = FixedArity(instruction.opcode())) {
      if (!check.ExpectOperands(*arity)) return false;
    }
    if (instruction.Is(HloOpcode::kBitcast) && !check.ExpectArrays()) return false;
    if (instruction.Is(HloOpcode::kTopK) && !verifier_internal::CheckTopK(check)) return false;
    if ((instruction.Is(HloOpcode::kScatter) || instruction.Is(HloOpcode::kGather)) &&
        !verifier_internal::CheckDimensionNumbers(check)) {
      return false;
    }
    if ((instruction.Is(HloOpcode::kSetDimensionSize) ||
         instruction.Is(HloOpcode::kGetDimensionSize)) &&
        !verifier_internal::CheckDimensionSizeOperand(check)) {
      return false;
    }
    const int minimum = MinimumOperands(instruction);
    if (instruction.operand_count() < minimum) {
      check.Error(check.op() + " takes at least " + std::to_string(minimum) +
                  " operand(s), has " + std::to_string(instruction.operand_count()));
      return false;
    }
    return true;
  }

  // Attribute names and operand counts first: the rules after them index
  // operands and read attributes. Then the shape's dimensions, and the
  // opcode's shape rule where every shape involved is static and valid.
  void VerifyInstruction(const HloInstruction& instruction) {
    VerifyAttributeNames(instruction);
    if (!VerifyOperandCount(instruction)) return;
    const InstructionCheck check(instruction, [this](std::string message) {
      Error(std::move(message));
    });
    if (!VerifyOperandsPresent(check)) return;
    if (!VerifyShapeDimensions(instruction.shape())) return;
    if (!ShapeRulesApply(instruction)) return;
    if (ShapeRule rule = ShapeRuleFor(RuleFor(instruction.opcode()))) rule(check);
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
