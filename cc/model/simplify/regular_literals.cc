#include "model/simplify/regular_literals.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/literal_text.h"
#include "pass/dce.h"

namespace exla {
namespace {

// The value of `text` as a number, or nothing where it is none the model
// compares (inf, nan, a value XLA prints otherwise).
std::optional<double> Number(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || s.find_first_of("iInN") != std::string::npos) return std::nullopt;
  return value;
}

// The stride s of a vector literal whose values are 0, s, 2s, ...: 1 for an
// iota of any numeric type, another s only for integers (IsR1StridedIota);
// nothing for any other literal.
std::optional<int64_t> Stride(const Shape& shape, const std::vector<std::string_view>& values) {
  const PrimitiveType type = shape.element_type();
  if (shape.rank() != 1 || values.size() < 2 || type == PrimitiveType::kPred) return std::nullopt;
  const std::optional<double> second = Number(values[1]);
  if (!second || *second == 0) return std::nullopt;
  const double stride = IsIntegralType(type) ? *second : 1.0;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::optional<double> value = Number(values[i]);
    if (!value || *value != stride * static_cast<double>(i)) return std::nullopt;
  }
  return static_cast<int64_t>(stride);
}

// A scalar literal of `type` whose text is `value`.
HloInstruction* ScalarLiteral(HloComputation* computation, PrimitiveType type, std::string value,
                              const std::string& name) {
  HloInstruction* scalar = computation->Add(HloOpcode::kConstant, Shape::Array(type, {}), {}, name);
  scalar->set_payload(std::move(value));
  return scalar;
}

// What XLA computes the literal `c` with, or nullptr where it keeps it.
HloInstruction* Computed(HloInstruction* c) {
  const Shape& shape = c->shape();
  if (!shape.IsArray() || shape.ElementCount() < 2) return nullptr;
  const std::optional<std::vector<std::string_view>> values = LiteralValues(c->payload(), shape);
  if (!values) return nullptr;
  HloComputation* computation = c->parent();
  bool all_first = Number((*values)[0]).has_value() || (*values)[0] == "true" || (*values)[0] == "false";
  for (std::string_view value : *values) all_first = all_first && value == (*values)[0];
  if (all_first) {  // equal texts are equal values (literal_text.h)
    HloInstruction* scalar = ScalarLiteral(computation, shape.element_type(), std::string((*values)[0]),
                                           c->name() + ".scalar");
    HloInstruction* broadcast = computation->Add(HloOpcode::kBroadcast, shape, {scalar}, c->name() + ".broadcast");
    broadcast->SetAttribute("dimensions", "{}");
    return broadcast;
  }
  const std::optional<int64_t> stride = Stride(shape, *values);
  if (!stride) return nullptr;
  HloInstruction* iota = computation->Add(HloOpcode::kIota, shape, {}, c->name() + ".iota");
  iota->SetIntAttribute("iota_dimension", 0);
  if (*stride == 1) return iota;
  HloInstruction* scalar =
      ScalarLiteral(computation, shape.element_type(), std::to_string(*stride), c->name() + ".stride");
  HloInstruction* broadcast = computation->Add(HloOpcode::kBroadcast, shape, {scalar}, c->name() + ".strides");
  broadcast->SetAttribute("dimensions", "{}");
  return computation->Add(HloOpcode::kMultiply, shape, {iota, broadcast}, c->name() + ".strided");
}

}  // namespace

bool RegularLiterals::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    std::vector<HloInstruction*> literals;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->Is(HloOpcode::kConstant)) literals.push_back(instruction.get());
    }
    bool changed = false;
    for (HloInstruction* literal : literals) {
      if (HloInstruction* computed = Computed(literal)) {
        literal->ReplaceAllUsesWith(computed);
        changed = true;
      }
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
