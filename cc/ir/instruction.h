// One HLO instruction: `name = shape opcode(operands), attr=value, ...`.
//
// The opcode is an HloOpcode; an opcode exla has never heard of is kOther
// and keeps its printed name, so that it still round-trips. Attributes are stored in print order as raw text, exactly as XLA
// printed them, and decoded on demand by typed accessors (dimensions, slice
// bounds, dot dimension numbers, ...). Two kinds of attributes refer to other
// IR objects and are therefore stored as pointers, so that renaming or
// removing the referenced object stays consistent:
//   * computation references (to_apply, body, condition, calls, ...);
//   * control-predecessors (instructions of the same computation).
#ifndef EXLA_IR_INSTRUCTION_H_
#define EXLA_IR_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"
#include "ir/opcode.h"
#include "ir/shape.h"

namespace exla {

class HloComputation;

struct HloAttribute {
  std::string key;
  std::string value;  // raw text; unused when `computations` is non-empty
  // The decoded value of an attribute passes interpret (attributes.h).
  TypedAttributeValue typed;
  // Resolved computation references. `braced` records whether XLA printed
  // them as a list (`branch_computations={a, b}`) or as a single name.
  std::vector<HloComputation*> computations;
  bool braced = false;
};

class HloInstruction {
 public:
  HloInstruction(std::string name, HloOpcode opcode, Shape shape)
      : name_(std::move(name)), opcode_(opcode), shape_(std::move(shape)) {}
  // An instruction whose opcode is only known by its printed name (the
  // parser's constructor): a name outside HloOpcode becomes kOther.
  HloInstruction(std::string name, std::string_view opcode_name, Shape shape);

  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  HloOpcode opcode() const { return opcode_; }
  bool Is(HloOpcode opcode) const { return opcode_ == opcode; }
  // The printed opcode name; for kOther the name the instruction was parsed
  // with.
  std::string_view opcode_name() const;
  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }
  HloComputation* parent() const { return parent_; }

  // Operands and users. Users are kept in sync by the mutators below.
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int i) const { return operands_[i]; }
  int operand_count() const { return static_cast<int>(operands_.size()); }
  const std::vector<HloInstruction*>& users() const { return users_; }
  int user_count() const { return static_cast<int>(users_.size()); }
  void AppendOperand(HloInstruction* operand);
  void ReplaceOperand(int index, HloInstruction* new_operand);
  // Replaces every use of `old_operand` by `new_operand`.
  void ReplaceOperandEverywhere(HloInstruction* old_operand, HloInstruction* new_operand);
  // Makes every user of this instruction (and the computation root, if this
  // is the root) use `replacement` instead. Shapes must be compatible.
  void ReplaceAllUsesWith(HloInstruction* replacement);
  // Drops all operand edges (used before deleting the instruction).
  void DetachOperands();

  // Text inside the parentheses for instructions whose parentheses hold
  // something other than operands: the literal of `constant`, the number of
  // `parameter`.
  const std::string& payload() const { return payload_; }
  void set_payload(std::string payload) { payload_ = std::move(payload); }
  int64_t parameter_number() const;

  // Attributes, in print order.
  const std::vector<HloAttribute>& attributes() const { return attributes_; }
  std::vector<HloAttribute>* mutable_attributes() { return &attributes_; }
  const HloAttribute* FindAttribute(std::string_view key) const;
  bool HasAttribute(std::string_view key) const { return FindAttribute(key) != nullptr; }
  // Raw text of an attribute, or nullopt.
  std::optional<std::string> RawAttribute(std::string_view key) const;
  // Adds or replaces a plain (non-computation) attribute; a typed one is
  // decoded (its text must be well formed: passes build it).
  void SetAttribute(std::string_view key, std::string value);
  void RemoveAttribute(std::string_view key);

  // Typed views of the attributes passes interpret, decoded at parse time.
  // An absent attribute reads as empty / nullopt.
  std::vector<int64_t> IntListAttribute(std::string_view key) const;  // {1,2}
  std::optional<int64_t> IntAttribute(std::string_view key) const;   // index=3
  void SetIntListAttribute(std::string_view key, const std::vector<int64_t>& values);
  void SetIntAttribute(std::string_view key, int64_t value);
  std::vector<int64_t> dimensions() const { return IntListAttribute("dimensions"); }
  std::vector<SliceBounds> slice() const;
  void SetSlice(const std::vector<SliceBounds>& bounds);
  DotDimensions dot_dimensions() const;
  void SetDotDimensions(const DotDimensions& dims);
  PaddingConfig padding_config() const;
  std::optional<ComparisonDirection> comparison_direction() const;
  void SetComparisonDirection(ComparisonDirection direction);
  // A compare's order, from either spelling (see ComparisonOrder);
  // SetComparisonOrder writes the spelling every supported XLA parses.
  ComparisonOrder comparison_order() const;
  void SetComparisonOrder(ComparisonOrder order);

  // Computations this instruction calls (to_apply, body, ...), in attribute
  // order. `CalledComputation(key)` returns the one named by `key`.
  std::vector<HloComputation*> called_computations() const;
  HloComputation* CalledComputation(std::string_view key) const;
  void SetCalledComputation(std::string_view key, HloComputation* computation);
  void ReplaceCalledComputation(HloComputation* old_computation, HloComputation* new_computation);

  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_successors_; }
  void AddControlPredecessor(HloInstruction* predecessor);
  void DropAllControlDependencies();

  // Whether removing this instruction could change observable behaviour
  // even if nothing uses its value (I/O, collectives, side-effecting custom
  // calls, RNG state).
  bool HasSideEffectNoRecurse() const;

  // Is this an elementwise operation on arrays of equal shape?
  bool IsElementwise() const;

 private:
  friend class HloComputation;
  friend class HloParser;

  std::string name_;
  HloOpcode opcode_;
  std::string other_opcode_name_;  // only for HloOpcode::kOther
  Shape shape_;
  std::string payload_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloAttribute> attributes_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  HloComputation* parent_ = nullptr;
};

// Attribute keys whose values name computations.
bool IsComputationAttribute(std::string_view key);

}  // namespace exla

#endif  // EXLA_IR_INSTRUCTION_H_
