#include "ir/parser.h"

#include "ir/attribute_syntax.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <vector>
#include <unordered_map>

namespace exla {

ParseError::ParseError(int line, int column, const std::string& message, const std::string& token)
    : std::invalid_argument("line " + std::to_string(line) + ", column " + std::to_string(column) +
                            ": " + message + " (near '" + token + "')"),
      line_(line),
      column_(column) {}

// The parser works directly on the characters: HLO text is line oriented but
// literals and attribute values can be long and deeply nested, and XLA's own
// grammar is easiest to follow with a hand-written recursive descent.
class HloParser {
 public:
  explicit HloParser(std::string_view text) : text_(text) {}

  std::unique_ptr<HloModule> ParseModule();
  Shape ParseShapeOnly() {
    SkipSpace();
    Shape shape = ParseShape();
    SkipSpace();
    if (!AtEnd()) Fail("unexpected text after shape");
    return shape;
  }

 private:
  struct PendingOperand {
    HloInstruction* user;
    std::string name;
    size_t position;
  };
  struct PendingComputationRef {
    HloInstruction* instruction;
    size_t attribute_index;
    std::vector<std::string> names;
    size_t position;
  };

  // ---- characters -------------------------------------------------------
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  // Skips spaces and newlines (and /* */ comments, which XLA accepts).
  void SkipSpace() {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && Peek(1) == '*') {
        size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else if (c == '/' && Peek(1) == '/') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  // Skips spaces but not newlines: attribute lists end at a line break.
  void SkipInlineSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (Peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c, const char* what) {
    if (!Consume(c)) Fail(std::string("expected '") + c + "' " + what);
  }
  bool ConsumeWord(const char* word) {
    SkipSpace();
    size_t n = std::strlen(word);
    if (text_.substr(pos_, n) == word && !IsNameChar(Peek(n))) {
      pos_ += n;
      return true;
    }
    return false;
  }
  static bool IsNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  }

  // A name with an optional '%' prefix; records whether '%' was used.
  std::string ParseName(const char* what) {
    SkipSpace();
    if (Peek() == '%') {
      ++pos_;
      saw_percent_ = true;
    }
    size_t start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    if (pos_ == start) Fail(std::string("expected ") + what);
    return std::string(text_.substr(start, pos_ - start));
  }
  int64_t ParseInteger() {
    SkipSpace();
    size_t start = pos_;
    if (Peek() == '-') ++pos_;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || (pos_ == start + 1 && text_[start] == '-')) {
      pos_ = start;
      Fail("expected an integer");
    }
    int64_t value = 0;
    const char* first = text_.data() + start;
    if (std::from_chars(first, text_.data() + pos_, value).ec != std::errc()) {
      pos_ = start;
      Fail("integer out of range (it must fit in 64 bits)");
    }
    return value;
  }

  // How SkipToDepthZero stopped.
  enum class ScanStop { kAtDepthZero, kTextEndedInBrackets, kLineBreakInBrackets };

  // Advances over quoted strings and nested brackets until, at bracket depth
  // 0, the next character is a closing bracket or one of `stops`, or the text
  // ends. With `line_break_ends_brackets`, a line break inside brackets stops
  // the scan as an error: XLA prints every attribute on one line, so there it
  // means a bracket was never closed.
  ScanStop SkipToDepthZero(std::string_view stops, bool line_break_ends_brackets) {
    int depth = 0;
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == '"') {
        SkipString();
        continue;
      }
      if (c == '(' || c == '{' || c == '[') {
        ++depth;
      } else if (c == ')' || c == '}' || c == ']') {
        if (depth == 0) return ScanStop::kAtDepthZero;
        --depth;
      } else if (depth == 0 && stops.find(c) != std::string_view::npos) {
        return ScanStop::kAtDepthZero;
      } else if (depth > 0 && c == '\n' && line_break_ends_brackets) {
        return ScanStop::kLineBreakInBrackets;
      }
      ++pos_;
    }
    return depth == 0 ? ScanStop::kAtDepthZero : ScanStop::kTextEndedInBrackets;
  }

  // Returns the text up to (not including) the matching closer of the
  // bracket just consumed, honouring nesting and quoted strings.
  std::string_view ScanBalanced(char closer) {
    size_t start = pos_;
    if (SkipToDepthZero("", /*line_break_ends_brackets=*/false) == ScanStop::kAtDepthZero &&
        !AtEnd()) {
      char c = text_[pos_];
      if (c != closer) Fail(std::string("unbalanced '") + c + "'");
      std::string_view inner = text_.substr(start, pos_ - start);
      ++pos_;
      return inner;
    }
    pos_ = start;
    Fail(std::string("missing '") + closer + "'");
    return {};
  }
  void SkipString() {
    size_t start = pos_;
    ++pos_;  // opening quote
    while (!AtEnd() && text_[pos_] != '"' && text_[pos_] != '\n') {
      if (text_[pos_] == '\\') ++pos_;
      ++pos_;
    }
    if (AtEnd() || text_[pos_] == '\n') {
      pos_ = start;
      Fail("unterminated string");
    }
    ++pos_;
  }
  // An attribute value: everything up to a ',' or line break at depth 0.
  std::string_view ScanAttributeValue() {
    size_t start = pos_;
    switch (SkipToDepthZero(",\n", /*line_break_ends_brackets=*/true)) {
      case ScanStop::kAtDepthZero:
        break;
      case ScanStop::kLineBreakInBrackets:
        FailAt(start, "unterminated bracket in attribute value");
        break;
      case ScanStop::kTextEndedInBrackets:
        pos_ = start;
        Fail("unbalanced brackets in attribute value");
        break;
    }
    size_t end = pos_;
    while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\r')) --end;
    if (end == start) Fail("expected an attribute value");
    return text_.substr(start, end - start);
  }

  // Attributes that passes decode must have the syntax they will be decoded
  // with (attribute_syntax.h); everything else is kept verbatim.
  void ValidateTypedAttribute(const std::string& key, std::string_view value, size_t position) {
    if (std::optional<AttributeSyntaxError> error = CheckTypedAttribute(key, value)) {
      FailAt(position + error->offset, error->message);
    }
  }

  [[noreturn]] void Fail(const std::string& message) const { FailAt(pos_, message); }
  [[noreturn]] void FailAt(size_t position, const std::string& message) const {
    int line = 1;
    size_t line_start = 0;
    size_t limit = std::min(position, text_.size());
    for (size_t i = 0; i < limit; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    int column = static_cast<int>(limit - line_start) + 1;
    // The offending token: up to the next delimiter, printable characters only.
    std::string token;
    for (size_t i = limit; i < text_.size() && token.size() < 40; ++i) {
      char c = text_[i];
      if (c == '\n' || (token.size() > 0 && (c == ' ' || c == ',' || c == ')'))) break;
      if (token.empty() && c == ' ') continue;  // show the next real token
      token += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    }
    if (token.empty()) token = limit >= text_.size() ? "<end of input>" : " ";
    throw ParseError(line, column, message, token);
  }

  // ---- grammar ----------------------------------------------------------
  Shape ParseShape();
  void ParseComputation(HloModule* module);
  void ParseInstruction(HloComputation* computation,
                        std::unordered_map<std::string, HloInstruction*>* scope,
                        std::vector<PendingOperand>* pending);
  void ParseAttributes(HloInstruction* instruction);
  bool LooksLikeShape() const;
  void ResolveComputationRefs(HloModule* module);
  static std::optional<std::string> LayoutError(const Shape& shape);
  void CheckEntryComputationLayout(HloModule* module, size_t header_start);

  std::string_view text_;
  size_t pos_ = 0;
  // Tuple shapes nest by recursion; the limit keeps hostile input from
  // overflowing the stack (XLA never prints more than a few levels).
  static constexpr int kMaxShapeNesting = 256;
  int shape_nesting_ = 0;
  bool saw_percent_ = false;
  bool saw_signature_ = false;
  bool saw_operand_shape_ = false;
  bool saw_operand_annotation_ = false;
  std::vector<PendingComputationRef> computation_refs_;
  std::vector<PendingOperand> pending_control_;  // of the current computation
};

bool HloParser::LooksLikeShape() const {
  // Operands may be prefixed by their shape in the long print style:
  // `f32[2]{0} %x` or `(f32[], s32[]) %t`. Names never contain '[' or start
  // with '(', so a type name directly followed by '[' decides it.
  if (Peek() == '(') return true;
  size_t i = pos_;
  while (i < text_.size() && std::isalnum(static_cast<unsigned char>(text_[i]))) ++i;
  if (i == pos_ || i >= text_.size() || text_[i] != '[') return false;
  return PrimitiveTypeFromName(text_.substr(pos_, i - pos_)) != PrimitiveType::kInvalid;
}

Shape HloParser::ParseShape() {
  SkipSpace();
  Shape shape;
  if (Consume('(')) {
    if (shape_nesting_ == kMaxShapeNesting) {
      --pos_;
      Fail("tuple shape nested more than " + std::to_string(kMaxShapeNesting) + " levels deep");
    }
    ++shape_nesting_;
    shape.kind_ = Shape::Kind::kTuple;
    SkipSpace();
    if (!Consume(')')) {
      do {
        shape.tuple_.push_back(ParseShape());
      } while (Consume(','));
      Expect(')', "to close the tuple shape");
    }
    --shape_nesting_;
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
  SkipSpace();
  if (Peek() != ']') {
    while (true) {
      SkipSpace();
      bool dynamic = false;
      int64_t size;
      if (Peek() == '?') {
        ++pos_;
        dynamic = true;
        size = -1;
      } else {
        if (Peek() == '<' && Peek(1) == '=') {
          pos_ += 2;
          dynamic = true;
        }
        size = ParseInteger();
      }
      shape.dims_.push_back(size);
      if (dynamic) {
        shape.dynamic_.resize(shape.dims_.size(), false);
        shape.dynamic_.back() = true;
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      break;
    }
  }
  if (!shape.dynamic_.empty()) shape.dynamic_.resize(shape.dims_.size(), false);
  if (Peek() != ']') Fail("expected ']' to close the dimensions");
  ++pos_;
  if (Peek() == '{') {
    size_t layout_start = pos_;
    ++pos_;
    shape.has_layout_ = true;
    shape.layout_ = std::string(ScanBalanced('}'));
    if (std::optional<std::string> error = LayoutError(shape)) FailAt(layout_start, *error);
  }
  return shape;
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
      // `name`, `%name` or `{a, %b}`.
      std::string_view value = attribute.value;
      attribute.braced = !value.empty() && value.front() == '{';
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
        if (i == s && i < value.size()) FailAt(value_start + i, "malformed name list in '" + key + "'");
        if (i > s) names.emplace_back(value.substr(s, i - s));
      }
      if (key == "control-predecessors") {
        for (const std::string& name : names) {
          pending_control_.push_back({instruction, name, value_start});
        }
      } else {
        computation_refs_.push_back(
            {instruction, instruction->attributes_.size(), names, value_start});
      }
    }
    instruction->attributes_.push_back(std::move(attribute));
  }
}

void HloParser::ParseInstruction(HloComputation* computation,
                                 std::unordered_map<std::string, HloInstruction*>* scope,
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
    instruction->payload_ = std::string(ScanBalanced(')'));
    if (raw->Is(HloOpcode::kParameter)) {
      for (char c : instruction->payload_) {
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != ' ') {
          Fail("parameter number must be a non-negative integer");
        }
      }
      if (instruction->payload_.empty()) Fail("missing parameter number");
    }
  } else {
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
        pending->push_back({raw, operand, operand_position});
        // Placeholder until resolution; keeps operand order.
        instruction->operands_.push_back(nullptr);
      } while (Consume(','));
    }
    Expect(')', "to close the operand list");
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

void HloParser::ParseComputation(HloModule* module) {
  SkipSpace();
  bool is_entry = ConsumeWord("ENTRY");
  size_t name_position = pos_;
  std::string name = ParseName("a computation name");
  SkipSpace();
  if (Peek() == '(') {
    // Signature `(p: f32[]) -> f32[]`: derived from the body, so skipped.
    ++pos_;
    ScanBalanced(')');
    SkipSpace();
    if (!(Peek() == '-' && Peek(1) == '>')) Fail("expected '->' in the computation signature");
    pos_ += 2;
    ParseShape();
    saw_signature_ = true;
  }
  Expect('{', "to open the computation body");
  auto computation = std::make_unique<HloComputation>(name);
  computation->set_is_entry(is_entry);
  HloComputation* raw = module->AddComputation(std::move(computation), is_entry);
  if (module->FindComputation(name) != raw) {
    FailAt(name_position, "duplicate computation name '" + name + "'");
  }

  std::unordered_map<std::string, HloInstruction*> scope;
  std::vector<PendingOperand> pending;
  pending_control_.clear();
  while (true) {
    SkipSpace();
    if (AtEnd()) Fail("missing '}' at the end of computation '" + name + "'");
    if (Peek() == '}') {
      ++pos_;
      break;
    }
    ParseInstruction(raw, &scope, &pending);
  }
  if (raw->instruction_count() == 0) FailAt(name_position, "computation '" + name + "' is empty");
  // Operands must be defined before their first use, as XLA's parser wants
  // (it looks every operand name up when it reads it); references are
  // resolved here, after the computation, only to report the better error.
  std::unordered_map<const HloInstruction*, size_t> order;
  for (const auto& instruction : raw->instructions()) order.emplace(instruction.get(), order.size());
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
  for (const PendingOperand& ref : pending_control_) {
    auto it = scope.find(ref.name);
    if (it == scope.end()) {
      FailAt(ref.position, "control predecessor '" + ref.name + "' is not defined");
    }
    ref.user->AddControlPredecessor(it->second);
  }
  if (raw->root() == nullptr) raw->set_root(raw->instructions().back().get());
  // Trailing computation attributes such as `, execution_thread="x"`.
  SkipInlineSpace();
  if (Peek() == ',') {
    size_t start = pos_;
    while (!AtEnd() && text_[pos_] != '\n') ++pos_;
    raw->set_suffix(std::string(text_.substr(start, pos_ - start)));
  }
}

// `entry_computation_layout={(p0, p1, ...)->result}` in the header must be
// well formed and agree with the ENTRY computation (XLA's parser reads it, and
// aborts the process when the count differs): the same number of parameters,
// each with the dimensions and element type of the parameter of that number,
// and the root's. Layouts may differ (the header's are the caller's).
void HloParser::CheckEntryComputationLayout(HloModule* module, size_t header_start) {
  static constexpr std::string_view kKey = "entry_computation_layout=";
  std::string_view header = text_.substr(header_start, module->header_attributes().size() + 1);
  size_t key = header.find(kKey);
  while (key != std::string_view::npos && key > 0 && IsNameChar(header[key - 1])) {
    key = header.find(kKey, key + 1);
  }
  if (key == std::string_view::npos) return;
  size_t saved = pos_;
  pos_ = header_start + key + kKey.size();
  Expect('{', "to open entry_computation_layout");
  Expect('(', "to open the entry computation's parameter shapes");
  std::vector<std::pair<size_t, Shape>> parameters;
  SkipSpace();
  if (!Consume(')')) {
    do {
      SkipSpace();
      parameters.emplace_back(pos_, ParseShape());
    } while (Consume(','));
    Expect(')', "to close the entry computation's parameter shapes");
  }
  SkipSpace();
  if (!(Peek() == '-' && Peek(1) == '>')) Fail("expected '->' in entry_computation_layout");
  pos_ += 2;
  SkipSpace();
  size_t result_position = pos_;
  Shape result = ParseShape();
  Expect('}', "to close entry_computation_layout");
  const HloComputation* entry = module->entry();
  std::vector<const HloInstruction*> by_number;
  for (const auto& instruction : entry->instructions()) {
    if (!instruction->Is(HloOpcode::kParameter)) continue;
    int64_t number = -1;
    std::string_view digits = instruction->payload();
    while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (number < 0 || number > static_cast<int64_t>(entry->instruction_count())) continue;
    if (by_number.size() <= static_cast<size_t>(number)) by_number.resize(number + 1, nullptr);
    by_number[number] = instruction.get();
  }
  if (parameters.size() != by_number.size()) {
    FailAt(header_start + key, "entry_computation_layout lists " +
                                   std::to_string(parameters.size()) + " parameter(s) but ENTRY '" +
                                   entry->name() + "' has " + std::to_string(by_number.size()));
  }
  auto same = [](const Shape& a, const Shape& b) {
    Shape x = a, y = b;
    x.ClearLayout();
    y.ClearLayout();
    return x.ToString(false) == y.ToString(false);
  };
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (by_number[i] != nullptr && !same(parameters[i].second, by_number[i]->shape())) {
      FailAt(parameters[i].first, "entry_computation_layout gives parameter " + std::to_string(i) +
                                      " the shape " + parameters[i].second.ToString(false) +
                                      " but it is " + by_number[i]->shape().ToString(false));
    }
  }
  if (entry->root() != nullptr && !same(result, entry->root()->shape())) {
    FailAt(result_position, "entry_computation_layout gives the result the shape " +
                                result.ToString(false) + " but ENTRY '" + entry->name() +
                                "' returns " + entry->root()->shape().ToString(false));
  }
  pos_ = saved;
}

void HloParser::ResolveComputationRefs(HloModule* module) {
  for (const PendingComputationRef& ref : computation_refs_) {
    HloAttribute& attribute = ref.instruction->attributes_[ref.attribute_index];
    for (const std::string& name : ref.names) {
      HloComputation* callee = module->FindComputation(name);
      if (callee == nullptr) FailAt(ref.position, "computation '" + name + "' is not defined");
      attribute.computations.push_back(callee);
    }
  }
}

std::unique_ptr<HloModule> HloParser::ParseModule() {
  SkipSpace();
  if (AtEnd()) Fail("empty HLO text");
  if (!ConsumeWord("HloModule")) Fail("expected 'HloModule' at the start of the module");
  std::string name = ParseName("a module name");
  auto module = std::make_unique<HloModule>(name);
  size_t header_start = pos_;
  // Header attributes: `, key=value` pairs (values as an instruction's, on
  // one line), as XLA's parser wants them; kept verbatim.
  {
    size_t check = pos_;
    while (true) {
      SkipInlineSpace();
      if (AtEnd() || Peek() == '\n') break;
      if (Peek() != ',') Fail("expected ', key=value' or the end of the line in the module header");
      ++pos_;
      SkipInlineSpace();
      size_t key_start = pos_;
      while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
      if (pos_ == key_start) Fail("expected a module attribute name");
      if (Peek() != '=') Fail("expected '=' after module attribute '" +
                              std::string(text_.substr(key_start, pos_ - key_start)) + "'");
      ++pos_;
      ScanAttributeValue();
    }
    pos_ = check;
  }
  // Header attributes: the rest of the line, balanced.
  {
    size_t start = pos_;
    int depth = 0;
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == '"') {
        SkipString();
        continue;
      }
      if (c == '{' || c == '(' || c == '[') ++depth;
      if (c == '}' || c == ')' || c == ']') --depth;
      if (c == '\n' && depth <= 0) break;
      ++pos_;
    }
    size_t end = pos_;
    while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\r')) --end;
    module->set_header_attributes(std::string(text_.substr(start, end - start)));
  }
  while (true) {
    SkipSpace();
    if (AtEnd()) break;
    // Debug-info sections XLA prints after the computations.
    static const char* kTrailers[] = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"};
    bool trailer = false;
    for (const char* word : kTrailers) {
      size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word && !IsNameChar(Peek(n))) trailer = true;
    }
    if (trailer) {
      module->set_trailer(std::string(text_.substr(pos_)));
      break;
    }
    ParseComputation(module.get());
  }
  if (module->entry() == nullptr) {
    if (module->computations().empty()) Fail("the module has no computations");
    // XLA treats the last computation as the entry when none is marked.
    HloComputation* last = module->computations().back().get();
    last->set_is_entry(true);
    module->set_entry(last);
  }
  ResolveComputationRefs(module.get());
  CheckEntryComputationLayout(module.get(), header_start);
  PrintStyle* style = module->mutable_style();
  style->percent_names = saw_percent_;
  style->computation_signatures = saw_signature_;
  style->operand_shapes = saw_operand_shape_;
  style->operand_index_annotations = saw_operand_annotation_;
  return module;
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
