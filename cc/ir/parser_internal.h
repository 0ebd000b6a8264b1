// The HLO text parser's state and grammar, shared by its parts:
// parser_lexer.cc (characters, names, numbers, brackets and errors),
// parser_shapes.cc (shapes and layouts), parser.cc (instructions and
// computations) and parser_module.cc (the module, its header and its
// cross-references). Internal to the parser: parser.h is the interface.
#ifndef EXLA_IR_PARSER_INTERNAL_H_
#define EXLA_IR_PARSER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/module.h"

namespace exla {

// The parser works directly on the characters: HLO text is line oriented but
// literals and attribute values can be long and deeply nested, and XLA's own
// grammar is easiest to follow with a hand-written recursive descent.
class HloParser {
 public:
  explicit HloParser(std::string_view text) : text_(text) {}

  std::unique_ptr<HloModule> ParseModule();
  // One shape and nothing after it.
  Shape ParseShapeOnly();

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
  using Scope = std::unordered_map<std::string, HloInstruction*>;

  // ---- characters (parser_lexer.cc) --------------------------------------
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  // Skips spaces and newlines (and /* */ comments, which XLA accepts).
  void SkipSpace();
  // Skips spaces but not newlines: attribute lists end at a line break.
  void SkipInlineSpace();
  bool Consume(char c);
  void Expect(char c, const char* what);
  bool ConsumeWord(const char* word);
  static bool IsNameChar(char c);
  // A name with an optional '%' prefix; records whether '%' was used.
  std::string ParseName(const char* what);
  int64_t ParseInteger();

  // How SkipToDepthZero stopped.
  enum class ScanStop { kAtDepthZero, kTextEndedInBrackets, kLineBreakInBrackets };

  // Advances over quoted strings and nested brackets until, at bracket depth
  // 0, the next character is a closing bracket or one of `stops`, or the text
  // ends. With `line_break_ends_brackets`, a line break inside brackets stops
  // the scan as an error: XLA prints every attribute on one line, so there it
  // means a bracket was never closed.
  ScanStop SkipToDepthZero(std::string_view stops, bool line_break_ends_brackets);
  // Returns the text up to (not including) the matching closer of the
  // bracket just consumed, honouring nesting and quoted strings.
  std::string_view ScanBalanced(char closer);
  void SkipString();
  // An attribute value: everything up to a ',' or line break at depth 0.
  std::string_view ScanAttributeValue();
  // Attributes that passes decode must have the syntax they will be decoded
  // with (attribute_syntax.h); everything else is kept verbatim.
  void ValidateTypedAttribute(const std::string& key, std::string_view value, size_t position);
  // Whether an operand starts here with its shape (the long print style).
  bool LooksLikeShape() const;

  [[noreturn]] void Fail(const std::string& message) const { FailAt(pos_, message); }
  [[noreturn]] void FailAt(size_t position, const std::string& message) const;

  // ---- shapes (parser_shapes.cc) -----------------------------------------
  Shape ParseShape();
  void ParseTupleElements(Shape* shape);
  void ParseDimensions(Shape* shape);
  void ParseLayout(Shape* shape);
  static std::optional<std::string> LayoutError(const Shape& shape);

  // ---- instructions and computations (parser.cc) -------------------------
  void ParseComputation(HloModule* module);
  void SkipComputationSignature();
  void ResolveOperands(HloComputation* computation, const Scope& scope,
                       const std::vector<PendingOperand>& pending);
  void ResolveControlPredecessors(const Scope& scope);
  void ParseInstruction(HloComputation* computation, Scope* scope,
                        std::vector<PendingOperand>* pending);
  void ParsePayload(HloInstruction* instruction);
  void ParseOperands(HloInstruction* instruction, std::vector<PendingOperand>* pending);
  void ParseAttributes(HloInstruction* instruction);
  void RecordNames(HloInstruction* instruction, const HloAttribute& attribute,
                   size_t value_start);

  // ---- the module (parser_module.cc) -------------------------------------
  void CheckHeaderAttributes();
  void ReadHeaderAttributes(HloModule* module);
  bool AtTrailer() const;
  std::string ReadStackFrameSections();
  void ResolveComputationRefs(HloModule* module);
  struct EntryLayout {
    std::vector<std::pair<size_t, Shape>> parameters;  // (position, shape)
    size_t result_position = 0;
    Shape result;
  };
  EntryLayout ParseEntryLayout();
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

}  // namespace exla

#endif  // EXLA_IR_PARSER_INTERNAL_H_
