#include "ir/opcode.h"

#include <string>
#include <unordered_map>

namespace exla {

std::string_view HloOpcodeString(HloOpcode opcode) {
  switch (opcode) {
#define EXLA_OPCODE_CASE(enumerator, name) \
  case HloOpcode::enumerator:              \
    return name;
    EXLA_HLO_OPCODES(EXLA_OPCODE_CASE)
#undef EXLA_OPCODE_CASE
    case HloOpcode::kOther:
      break;
  }
  return "other";
}

std::optional<HloOpcode> StringToHloOpcode(std::string_view name) {
  // Built once: the parser looks up every instruction's opcode.
  static const auto* const kByName = [] {
    auto* map = new std::unordered_map<std::string_view, HloOpcode>();
#define EXLA_OPCODE_ENTRY(enumerator, name) map->emplace(name, HloOpcode::enumerator);
    EXLA_HLO_OPCODES(EXLA_OPCODE_ENTRY)
#undef EXLA_OPCODE_ENTRY
    return map;
  }();
  auto it = kByName->find(name);
  if (it == kByName->end()) return std::nullopt;
  return it->second;
}

}  // namespace exla
