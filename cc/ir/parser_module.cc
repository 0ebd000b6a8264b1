// The parser's module level: the header line and its attributes, the
// computations, the debug-info trailer, the references between
// computations, and the header's entry_computation_layout against ENTRY.
#include <cctype>
#include <charconv>
#include <cstring>

#include "ir/parser_internal.h"

namespace exla {
namespace {

// ENTRY's parameters by number (null where a number is missing).
std::vector<const HloInstruction*> ParametersByNumber(const HloComputation& entry) {
  std::vector<const HloInstruction*> by_number;
  for (const auto& instruction : entry.instructions()) {
    if (!instruction->Is(HloOpcode::kParameter)) continue;
    int64_t number = -1;
    std::string_view digits = instruction->payload();
    while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (number < 0 || number > static_cast<int64_t>(entry.instruction_count())) continue;
    if (by_number.size() <= static_cast<size_t>(number)) by_number.resize(number + 1, nullptr);
    by_number[number] = instruction.get();
  }
  return by_number;
}

// The same dimensions and element type; layouts may differ (the header's
// are the caller's).
bool SameUpToLayout(const Shape& a, const Shape& b) {
  Shape x = a, y = b;
  x.ClearLayout();
  y.ClearLayout();
  return x.ToString(false) == y.ToString(false);
}

}  // namespace

std::unique_ptr<HloModule> HloParser::ParseModule() {
  SkipSpace();
  if (AtEnd()) Fail("empty HLO text");
  if (!ConsumeWord("HloModule")) Fail("expected 'HloModule' at the start of the module");
  std::string name = ParseName("a module name");
  auto module = std::make_unique<HloModule>(name);
  size_t header_start = pos_;
  CheckHeaderAttributes();
  ReadHeaderAttributes(module.get());
  SkipSpace();
  if (AtTrailer()) module->set_preamble(ReadStackFrameSections());
  while (true) {
    SkipSpace();
    if (AtEnd()) break;
    if (AtTrailer()) {
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

// Header attributes: `, key=value` pairs (values as an instruction's, on one
// line), as XLA's parser wants them. Only checked: they are kept verbatim.
void HloParser::CheckHeaderAttributes() {
  const size_t start = pos_;
  while (true) {
    SkipInlineSpace();
    if (AtEnd() || Peek() == '\n') break;
    if (Peek() != ',') Fail("expected ', key=value' or the end of the line in the module header");
    ++pos_;
    SkipInlineSpace();
    size_t key_start = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    if (pos_ == key_start) Fail("expected a module attribute name");
    if (Peek() != '=') {
      Fail("expected '=' after module attribute '" +
           std::string(text_.substr(key_start, pos_ - key_start)) + "'");
    }
    ++pos_;
    ScanAttributeValue();
  }
  pos_ = start;
}

// Header attributes: the rest of the line, balanced, kept as text.
void HloParser::ReadHeaderAttributes(HloModule* module) {
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

// Whether the debug-info sections XLA prints after the computations start
// here.
bool HloParser::AtTrailer() const {
  static const char* const kTrailers[] = {"FileNames", "FunctionNames", "FileLocations",
                                          "StackFrames"};
  for (const char* word : kTrailers) {
    size_t n = std::strlen(word);
    if (text_.substr(pos_, n) == word && !IsNameChar(Peek(n))) return true;
  }
  return false;
}

// The stack-frame sections where jaxlib >= 0.11 prints them, before the
// computations: each a keyword line, then numbered lines, then blank lines.
// Kept verbatim up to the first computation.
std::string HloParser::ReadStackFrameSections() {
  const size_t start = pos_;
  while (AtTrailer()) {
    while (true) {  // the keyword line, then every line that starts with a number
      while (!AtEnd() && Peek() != '\n') ++pos_;
      if (AtEnd()) break;
      ++pos_;
      size_t next = pos_;
      while (next < text_.size() && (text_[next] == ' ' || text_[next] == '\t')) ++next;
      if (next >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[next]))) break;
    }
    SkipSpace();
  }
  return std::string(text_.substr(start, pos_ - start));
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

// After `entry_computation_layout=`: `{(p0, p1, ...)->result}`.
HloParser::EntryLayout HloParser::ParseEntryLayout() {
  EntryLayout layout;
  Expect('{', "to open entry_computation_layout");
  Expect('(', "to open the entry computation's parameter shapes");
  SkipSpace();
  if (!Consume(')')) {
    do {
      SkipSpace();
      const size_t position = pos_;
      layout.parameters.emplace_back(position, ParseShape());
    } while (Consume(','));
    Expect(')', "to close the entry computation's parameter shapes");
  }
  SkipSpace();
  if (!(Peek() == '-' && Peek(1) == '>')) Fail("expected '->' in entry_computation_layout");
  pos_ += 2;
  SkipSpace();
  layout.result_position = pos_;
  layout.result = ParseShape();
  Expect('}', "to close entry_computation_layout");
  return layout;
}

// `entry_computation_layout={(p0, p1, ...)->result}` in the header must be
// well formed and agree with the ENTRY computation (XLA's parser reads it, and
// aborts the process when the count differs): the same number of parameters,
// each with the dimensions and element type of the parameter of that number,
// and the root's.
void HloParser::CheckEntryComputationLayout(HloModule* module, size_t header_start) {
  static constexpr std::string_view kKey = "entry_computation_layout=";
  std::string_view header = text_.substr(header_start, module->header_attributes().size() + 1);
  size_t key = header.find(kKey);
  while (key != std::string_view::npos && key > 0 && IsNameChar(header[key - 1])) {
    key = header.find(kKey, key + 1);
  }
  if (key == std::string_view::npos) return;
  const size_t saved = pos_;
  pos_ = header_start + key + kKey.size();
  const EntryLayout layout = ParseEntryLayout();
  const std::vector<std::pair<size_t, Shape>>& parameters = layout.parameters;
  const Shape& result = layout.result;
  const size_t result_position = layout.result_position;
  const HloComputation* entry = module->entry();
  std::vector<const HloInstruction*> by_number = ParametersByNumber(*entry);
  if (parameters.size() != by_number.size()) {
    FailAt(header_start + key, "entry_computation_layout lists " +
                                   std::to_string(parameters.size()) + " parameter(s) but ENTRY '" +
                                   entry->name() + "' has " + std::to_string(by_number.size()));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (by_number[i] != nullptr && !SameUpToLayout(parameters[i].second, by_number[i]->shape())) {
      FailAt(parameters[i].first, "entry_computation_layout gives parameter " + std::to_string(i) +
                                      " the shape " + parameters[i].second.ToString(false) +
                                      " but it is " + by_number[i]->shape().ToString(false));
    }
  }
  if (entry->root() != nullptr && !SameUpToLayout(result, entry->root()->shape())) {
    FailAt(result_position, "entry_computation_layout gives the result the shape " +
                                result.ToString(false) + " but ENTRY '" + entry->name() +
                                "' returns " + entry->root()->shape().ToString(false));
  }
  pos_ = saved;
}

}  // namespace exla
