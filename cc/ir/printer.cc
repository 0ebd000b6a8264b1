#include "ir/printer.h"

namespace exla {
namespace {

void AppendName(std::string* out, const std::string& name, const PrintStyle& style) {
  if (style.percent_names) out->push_back('%');
  out->append(name);
}

void AppendAttribute(std::string* out, const HloInstruction& instruction,
                     const HloAttribute& attribute, const PrintStyle& style) {
  if (attribute.key == "control-predecessors") {
    const auto& predecessors = instruction.control_predecessors();
    if (predecessors.empty()) return;
    out->append(", control-predecessors={");
    for (size_t i = 0; i < predecessors.size(); ++i) {
      if (i > 0) out->append(", ");
      AppendName(out, predecessors[i]->name(), style);
    }
    out->push_back('}');
    return;
  }
  out->append(", ");
  out->append(attribute.key);
  out->push_back('=');
  if (attribute.computations.empty()) {
    out->append(attribute.value);
    return;
  }
  if (attribute.braced) out->push_back('{');
  for (size_t i = 0; i < attribute.computations.size(); ++i) {
    if (i > 0) out->append(", ");
    AppendName(out, attribute.computations[i]->name(), style);
  }
  if (attribute.braced) out->push_back('}');
}

void AppendInstruction(std::string* out, const HloInstruction& instruction, bool is_root,
                       const PrintStyle& style) {
  out->append("  ");
  if (is_root) out->append("ROOT ");
  AppendName(out, instruction.name(), style);
  out->append(" = ");
  instruction.shape().AppendTo(out);
  out->push_back(' ');
  out->append(instruction.opcode_name());
  out->push_back('(');
  if (instruction.Is(HloOpcode::kConstant) || instruction.Is(HloOpcode::kParameter)) {
    out->append(instruction.payload());
  } else {
    for (int i = 0; i < instruction.operand_count(); ++i) {
      if (i > 0) out->append(", ");
      if (style.operand_index_annotations && i > 0 && i % 5 == 0) {
        out->append("/*index=" + std::to_string(i) + "*/");
      }
      const HloInstruction* operand = instruction.operand(i);
      if (style.operand_shapes) {
        operand->shape().AppendTo(out);
        out->push_back(' ');
      }
      AppendName(out, operand->name(), style);
    }
  }
  out->push_back(')');
  bool printed_control = false;
  for (const HloAttribute& attribute : instruction.attributes()) {
    if (attribute.key == "control-predecessors") printed_control = true;
    AppendAttribute(out, instruction, attribute, style);
  }
  // Control edges added by a pass have no attribute slot yet.
  if (!printed_control && !instruction.control_predecessors().empty()) {
    HloAttribute control;
    control.key = "control-predecessors";
    AppendAttribute(out, instruction, control, style);
  }
  out->push_back('\n');
}

void AppendComputation(std::string* out, const HloComputation& computation,
                       const PrintStyle& style) {
  if (computation.is_entry()) out->append("ENTRY ");
  AppendName(out, computation.name(), style);
  if (style.computation_signatures) {
    out->append(" (");
    std::vector<HloInstruction*> params = computation.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) out->append(", ");
      out->append(params[i]->name());
      out->append(": ");
      params[i]->shape().AppendTo(out, /*with_layout=*/false);
    }
    out->append(") -> ");
    if (computation.root() != nullptr) computation.root()->shape().AppendTo(out, false);
  }
  out->append(" {\n");
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    AppendInstruction(out, *instruction, instruction == computation.root(), style);
  }
  out->append("}");
  out->append(computation.suffix());
  out->append("\n");
}

}  // namespace

std::string PrintHloInstruction(const HloInstruction& instruction, const PrintStyle& style) {
  std::string out;
  bool is_root = instruction.parent() != nullptr && instruction.parent()->root() == &instruction;
  AppendInstruction(&out, instruction, is_root, style);
  out.pop_back();  // newline
  // Drop the indentation for a single instruction.
  return out.substr(2);
}

std::string PrintHloComputation(const HloComputation& computation, const PrintStyle& style) {
  std::string out;
  AppendComputation(&out, computation, style);
  return out;
}

std::string PrintHloModule(const HloModule& module) {
  std::string out = "HloModule ";
  out.append(module.name());
  out.append(module.header_attributes());
  out.append("\n\n");
  out.append(module.preamble());
  for (const auto& computation : module.computations()) {
    AppendComputation(&out, *computation, module.style());
    out.append("\n");
  }
  out.append(module.trailer());
  return out;
}

}  // namespace exla
