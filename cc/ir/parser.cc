// The parser's instructions and computations; see parser_internal.h for its
// other parts.
#include "ir/parser.h"

#include <cctype>

#include "ir/attribute_syntax.h"
#include "ir/parser_internal.h"

namespace exla {

ParseError::ParseError(int line, int column, const std::string& message, const std::string& token)
    : std::invalid_argument("line " + std::to_string(line) + ", column " + std::to_string(column) +
                            ": " + message + " (near '" + token + "')"),
      line_(line),
      column_(column) {}

void HloParser::ParseAttributes(HloInstruction* instruction) {
  while (true) {
    SkipInlineSpace();
    if (Peek() != ',') return;
    ++pos_;
    SkipSpace();
    size_t key_start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    if (pos_ == key_start) Fail("expected an attribute name");
    std::string key(text_.substr(key_start, pos_ - key_start));
    if (Peek() != '=') Fail("expected '=' after attribute '" + key + "'");
    for (const HloAttribute& earlier : instruction->attributes_) {
      // XLA's parser: "attribute <key> already exists".
      if (earlier.key == key) FailAt(key_start, "attribute '" + key + "' is given twice");
    }
    ++pos_;
    size_t value_start = pos_;
    HloAttribute attribute;
    attribute.key = key;
    attribute.value = std::string(ScanAttributeValue());
    ValidateTypedAttribute(key, attribute.value, value_start);
    attribute.typed = DecodeTypedAttribute(key, attribute.value);
    if (IsComputationAttribute(key) || key == "control-predecessors") {
      attribute.braced = !attribute.value.empty() && attribute.value.front() == '{';
      RecordNames(instruction, attribute, value_start);
    }
    instruction->attributes_.push_back(std::move(attribute));
  }
}

// The names of called computations or control predecessors (`name`,
// `%name` or `{a, %b}`), resolved once everything they may name is read.
void HloParser::RecordNames(HloInstruction* instruction, const HloAttribute& attribute,
                            size_t value_start) {
  std::string_view value = attribute.value;
  if (attribute.braced) value = value.substr(1, value.size() - 2);
  std::vector<std::string> names;
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && (value[i] == ' ' || value[i] == ',' || value[i] == '%')) {
      if (value[i] == '%') saw_percent_ = true;
      ++i;
    }
    size_t s = i;
    while (i < value.size() && IsNameChar(value[i])) ++i;
    if (i == s && i < value.size()) {
      FailAt(value_start + i, "malformed name list in '" + attribute.key + "'");
    }
    if (i > s) names.emplace_back(value.substr(s, i - s));
  }
  if (attribute.key == "control-predecessors") {
    for (const std::string& name : names) pending_control_.push_back({instruction, name, value_start});
  } else {
    computation_refs_.push_back({instruction, instruction->attributes_.size(), names, value_start});
  }
}

// The literal of a constant or the number of a parameter, kept as text.
void HloParser::ParsePayload(HloInstruction* instruction) {
  instruction->payload_ = std::string(ScanBalanced(')'));
  if (!instruction->Is(HloOpcode::kParameter)) return;
  for (char c : instruction->payload_) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ' ') {
      Fail("parameter number must be a non-negative integer");
    }
  }
  if (instruction->payload_.empty()) Fail("missing parameter number");
}

// The operand names up to the ')', each resolved after the computation.
void HloParser::ParseOperands(HloInstruction* instruction, std::vector<PendingOperand>* pending) {
  SkipSpace();
  if (Peek() != ')') {
    do {
      // pos_ + 1 may be past the end of a truncated text (substr would throw).
      if (text_.substr(pos_, 2) == "/*" ||
          (pos_ < text_.size() && text_.substr(pos_ + 1, 2) == "/*")) {
        saw_operand_annotation_ = true;
      }
      SkipSpace();
      if (LooksLikeShape()) {
        ParseShape();  // the operand's own shape is authoritative
        saw_operand_shape_ = true;
      }
      SkipSpace();
      size_t operand_position = pos_;
      std::string operand = ParseName("an operand name");
      pending->push_back({instruction, operand, operand_position});
      // Placeholder until resolution; keeps operand order.
      instruction->operands_.push_back(nullptr);
    } while (Consume(','));
  }
  Expect(')', "to close the operand list");
}

void HloParser::ParseInstruction(HloComputation* computation, Scope* scope,
                                 std::vector<PendingOperand>* pending) {
  SkipSpace();
  bool is_root = ConsumeWord("ROOT");
  size_t name_position = pos_;
  std::string name = ParseName("an instruction name");
  Expect('=', "after the instruction name");
  Shape shape = ParseShape();
  SkipSpace();
  size_t opcode_start = pos_;
  while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
  if (pos_ == opcode_start) Fail("expected an opcode");
  std::string opcode(text_.substr(opcode_start, pos_ - opcode_start));
  if (Peek() != '(') Fail("expected '(' after the opcode '" + opcode + "'");
  ++pos_;

  // An opcode outside HloOpcode becomes kOther and keeps its name.
  auto instruction = std::make_unique<HloInstruction>(name, std::string_view(opcode), std::move(shape));
  HloInstruction* raw = instruction.get();
  if (raw->Is(HloOpcode::kConstant) || raw->Is(HloOpcode::kParameter)) {
    ParsePayload(raw);
  } else {
    ParseOperands(raw, pending);
  }
  ParseAttributes(raw);

  if (!scope->emplace(name, raw).second) {
    FailAt(name_position, "duplicate instruction name '" + name + "'");
  }
  computation->AddParsedInstruction(std::move(instruction));
  if (is_root) {
    if (computation->root() != nullptr) FailAt(name_position, "second ROOT in computation");
    computation->set_root(raw);
  }
}

// Signature `(p: f32[]) -> f32[]`: derived from the body, so skipped.
void HloParser::SkipComputationSignature() {
  ++pos_;
  ScanBalanced(')');
  SkipSpace();
  if (!(Peek() == '-' && Peek(1) == '>')) Fail("expected '->' in the computation signature");
  pos_ += 2;
  ParseShape();
  saw_signature_ = true;
}

void HloParser::ParseComputation(HloModule* module) {
  SkipSpace();
  bool is_entry = ConsumeWord("ENTRY");
  size_t name_position = pos_;
  std::string name = ParseName("a computation name");
  SkipSpace();
  if (Peek() == '(') SkipComputationSignature();
  Expect('{', "to open the computation body");
  auto computation = std::make_unique<HloComputation>(name);
  computation->set_is_entry(is_entry);
  HloComputation* raw = module->AddComputation(std::move(computation), is_entry);
  if (module->FindComputation(name) != raw) {
    FailAt(name_position, "duplicate computation name '" + name + "'");
  }
  Scope scope;
  std::vector<PendingOperand> pending;
  pending_control_.clear();
  while (true) {
    SkipSpace();
    if (AtEnd()) Fail("missing '}' at the end of computation '" + name + "'");
    if (Consume('}')) break;
    ParseInstruction(raw, &scope, &pending);
  }
  if (raw->instruction_count() == 0) FailAt(name_position, "computation '" + name + "' is empty");
  ResolveOperands(raw, scope, pending);
  ResolveControlPredecessors(scope);
  if (raw->root() == nullptr) raw->set_root(raw->instructions().back().get());
  // Trailing computation attributes such as `, execution_thread="x"`.
  SkipInlineSpace();
  if (Peek() == ',') {
    size_t start = pos_;
    while (!AtEnd() && text_[pos_] != '\n') ++pos_;
    raw->set_suffix(std::string(text_.substr(start, pos_ - start)));
  }
}

// Operands must be defined before their first use, as XLA's parser wants (it
// looks every operand name up when it reads it); references are resolved
// here, after the computation, only to report the better error.
void HloParser::ResolveOperands(HloComputation* computation, const Scope& scope,
                                const std::vector<PendingOperand>& pending) {
  const std::string& name = computation->name();
  std::unordered_map<const HloInstruction*, size_t> order;
  for (const auto& instruction : computation->instructions()) {
    order.emplace(instruction.get(), order.size());
  }
  std::unordered_map<HloInstruction*, int> filled;
  for (const PendingOperand& ref : pending) {
    auto it = scope.find(ref.name);
    if (it == scope.end()) {
      FailAt(ref.position, "operand '" + ref.name + "' is not defined in computation '" + name + "'");
    }
    if (order[it->second] >= order[ref.user]) {
      FailAt(ref.position, "operand '" + ref.name + "' is used before its definition in "
             "computation '" + name + "' (XLA wants every operand defined on an earlier line)");
    }
    int slot = filled[ref.user]++;
    ref.user->operands_[slot] = it->second;
    // An instruction is a user once, however often it uses the operand; it
    // was the last one added if it uses the operand repeatedly.
    auto& users = it->second->users_;
    if (users.empty() || users.back() != ref.user) users.push_back(ref.user);
  }
}

void HloParser::ResolveControlPredecessors(const Scope& scope) {
  for (const PendingOperand& ref : pending_control_) {
    auto it = scope.find(ref.name);
    if (it == scope.end()) {
      FailAt(ref.position, "control predecessor '" + ref.name + "' is not defined");
    }
    ref.user->AddControlPredecessor(it->second);
  }
}

std::unique_ptr<HloModule> ParseHloModule(std::string_view text) {
  HloParser parser(text);
  return parser.ParseModule();
}

Shape ParseShape(std::string_view text) {
  HloParser parser(text);
  return parser.ParseShapeOnly();
}

}  // namespace exla
