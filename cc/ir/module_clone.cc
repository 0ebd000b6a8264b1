// HloModule::Clone: the module as parsing its printed text would give it.
//
// The copy must equal parse(print(module)) in everything a rewrite or an
// analysis may read, not only in its text: the order of the instructions
// (the printer writes them in post order), the order of each value's users
// (the parser adds a user as it reads it), the text of attributes that name
// computations or control predecessors (the printer writes it from the
// pointers) and their decoded values, and the names the module has reserved.
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"

namespace exla {
namespace {

using ComputationMap = std::unordered_map<const HloComputation*, HloComputation*>;
using InstructionMap = std::unordered_map<const HloInstruction*, HloInstruction*>;

std::string PrintedName(const std::string& name, const PrintStyle& style) {
  return style.percent_names ? "%" + name : name;
}

// `names` as the printer writes a list of them: `a`, or `{a, b}` when braced.
std::string PrintedList(const std::vector<std::string>& names, bool braced, const PrintStyle& style) {
  std::string text = braced ? "{" : "";
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i > 0 ? ", " : "") + PrintedName(names[i], style);
  }
  return braced ? text + "}" : text;
}

// The attribute the parser makes of `key=value`.
HloAttribute ParsedAttribute(const std::string& key, std::string value) {
  HloAttribute attribute;
  attribute.key = key;
  attribute.value = std::move(value);
  attribute.typed = DecodeTypedAttribute(attribute.key, attribute.value);
  if (IsComputationAttribute(key) || key == "control-predecessors") {
    attribute.braced = !attribute.value.empty() && attribute.value.front() == '{';
  }
  return attribute;
}

std::string PrintedControlPredecessors(const HloInstruction& instruction, const PrintStyle& style) {
  std::vector<std::string> names;
  for (const HloInstruction* predecessor : instruction.control_predecessors()) names.push_back(predecessor->name());
  return PrintedList(names, /*braced=*/true, style);
}

// The attributes of `original` as the parser reads them back from its
// printed line. Control predecessors print only when there are some, in
// their own slot or, when a pass added them, after the other attributes.
std::vector<HloAttribute> CopiedAttributes(const HloInstruction& original, const ComputationMap& computations,
                                           const PrintStyle& style) {
  std::vector<HloAttribute> copies;
  bool control_printed = false;
  for (const HloAttribute& attribute : original.attributes()) {
    if (attribute.key == "control-predecessors") {
      control_printed = true;
      if (original.control_predecessors().empty()) continue;
      copies.push_back(ParsedAttribute(attribute.key, PrintedControlPredecessors(original, style)));
      continue;
    }
    if (attribute.computations.empty()) {
      copies.push_back(ParsedAttribute(attribute.key, attribute.value));
      continue;
    }
    std::vector<std::string> names;
    for (const HloComputation* called : attribute.computations) names.push_back(called->name());
    HloAttribute copy = ParsedAttribute(attribute.key, PrintedList(names, attribute.braced, style));
    for (const HloComputation* called : attribute.computations) copy.computations.push_back(computations.at(called));
    copies.push_back(std::move(copy));
  }
  if (!control_printed && !original.control_predecessors().empty()) {
    copies.push_back(ParsedAttribute("control-predecessors", PrintedControlPredecessors(original, style)));
  }
  return copies;
}

}  // namespace

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto copy = std::make_unique<HloModule>(name_);
  copy->header_attributes_ = header_attributes_;
  copy->trailer_ = trailer_;
  copy->style_ = style_;
  ComputationMap computations;
  for (const auto& computation : computations_) {
    auto fresh = std::make_unique<HloComputation>(computation->name());
    fresh->set_suffix(computation->suffix());
    computations[computation.get()] = copy->AddComputation(std::move(fresh), computation->is_entry());
  }
  if (entry_ != nullptr) copy->set_entry(computations.at(entry_));
  for (const auto& computation : computations_) {
    HloComputation* into = computations.at(computation.get());
    InstructionMap instructions;
    const std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    for (const HloInstruction* original : order) {
      auto fresh = std::make_unique<HloInstruction>(original->name(), original->opcode_name(), original->shape());
      fresh->set_payload(original->payload());
      *fresh->mutable_attributes() = CopiedAttributes(*original, computations, style_);
      for (const HloInstruction* operand : original->operands()) fresh->AppendOperand(instructions.at(operand));
      instructions[original] = fresh.get();
      into->AddParsedInstruction(std::move(fresh));
    }
    for (const HloInstruction* original : order) {
      for (const HloInstruction* predecessor : original->control_predecessors()) {
        instructions.at(original)->AddControlPredecessor(instructions.at(predecessor));
      }
    }
    if (computation->root() != nullptr) into->set_root(instructions.at(computation->root()));
  }
  return copy;
}

}  // namespace exla
