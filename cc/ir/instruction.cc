#include "ir/instruction.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "ir/computation.h"

namespace exla {
namespace {

void RemoveOne(std::vector<HloInstruction*>* list, HloInstruction* item) {
  auto it = std::find(list->begin(), list->end(), item);
  if (it != list->end()) list->erase(it);
}

void AddUnique(std::vector<HloInstruction*>* list, HloInstruction* item) {
  if (std::find(list->begin(), list->end(), item) == list->end()) list->push_back(item);
}

// Parses every integer in `text` in order ("{1,0}" -> 1, 0).
std::vector<int64_t> ParseIntegers(std::string_view text) {
  std::vector<int64_t> values;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool negative = c == '-' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (std::isdigit(static_cast<unsigned char>(c)) || negative) {
      size_t start = i;
      ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      values.push_back(std::strtoll(std::string(text.substr(start, i - start)).c_str(), nullptr, 10));
    } else {
      ++i;
    }
  }
  return values;
}

std::string FormatIntList(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  out += "}";
  return out;
}

}  // namespace

bool IsComputationAttribute(std::string_view key) {
  return key == "to_apply" || key == "condition" || key == "body" || key == "calls" ||
         key == "branch_computations" || key == "true_computation" ||
         key == "false_computation" || key == "select" || key == "scatter";
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  AddUnique(&operand->users_, this);
}

void HloInstruction::ReplaceOperand(int index, HloInstruction* new_operand) {
  HloInstruction* old_operand = operands_[index];
  if (old_operand == new_operand) return;
  operands_[index] = new_operand;
  if (std::find(operands_.begin(), operands_.end(), old_operand) == operands_.end()) {
    RemoveOne(&old_operand->users_, this);
  }
  AddUnique(&new_operand->users_, this);
}

void HloInstruction::ReplaceOperandEverywhere(HloInstruction* old_operand,
                                             HloInstruction* new_operand) {
  for (int i = 0; i < operand_count(); ++i) {
    if (operands_[i] == old_operand) ReplaceOperand(i, new_operand);
  }
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  if (replacement == this) return;
  // Copy: ReplaceOperandEverywhere edits users_.
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    // The replacement may be built from this instruction (e.g. a convert of
    // it); it must keep using the original.
    if (user == replacement) continue;
    user->ReplaceOperandEverywhere(this, replacement);
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(replacement);
}

void HloInstruction::DetachOperands() {
  for (HloInstruction* operand : operands_) RemoveOne(&operand->users_, this);
  operands_.clear();
}

int64_t HloInstruction::parameter_number() const {
  return std::strtoll(payload_.c_str(), nullptr, 10);
}

const HloAttribute* HloInstruction::FindAttribute(std::string_view key) const {
  for (const HloAttribute& attribute : attributes_) {
    if (attribute.key == key) return &attribute;
  }
  return nullptr;
}

std::optional<std::string> HloInstruction::RawAttribute(std::string_view key) const {
  const HloAttribute* attribute = FindAttribute(key);
  if (attribute == nullptr) return std::nullopt;
  return attribute->value;
}

void HloInstruction::SetAttribute(std::string_view key, std::string value) {
  for (HloAttribute& attribute : attributes_) {
    if (attribute.key == key) {
      attribute.value = std::move(value);
      attribute.computations.clear();
      return;
    }
  }
  // XLA prints metadata and the other "decoration" attributes last; keep new
  // semantic attributes in front of them so printed text looks familiar.
  auto is_decoration = [](const HloAttribute& a) {
    return a.key == "metadata" || a.key == "frontend_attributes" || a.key == "backend_config" ||
           a.key == "sharding" || a.key == "statistics" || a.key == "control-predecessors";
  };
  auto position = std::find_if(attributes_.begin(), attributes_.end(), is_decoration);
  HloAttribute attribute;
  attribute.key = std::string(key);
  attribute.value = std::move(value);
  attributes_.insert(position, std::move(attribute));
}

void HloInstruction::RemoveAttribute(std::string_view key) {
  attributes_.erase(std::remove_if(attributes_.begin(), attributes_.end(),
                                   [&](const HloAttribute& a) { return a.key == key; }),
                    attributes_.end());
}

std::vector<int64_t> HloInstruction::IntListAttribute(std::string_view key) const {
  const HloAttribute* attribute = FindAttribute(key);
  if (attribute == nullptr) return {};
  return ParseIntegers(attribute->value);
}

std::optional<int64_t> HloInstruction::IntAttribute(std::string_view key) const {
  const HloAttribute* attribute = FindAttribute(key);
  if (attribute == nullptr) return std::nullopt;
  std::vector<int64_t> values = ParseIntegers(attribute->value);
  if (values.size() != 1) return std::nullopt;
  return values[0];
}

void HloInstruction::SetIntListAttribute(std::string_view key, const std::vector<int64_t>& values) {
  SetAttribute(key, FormatIntList(values));
}

std::vector<SliceBounds> HloInstruction::slice() const {
  std::vector<SliceBounds> bounds;
  const HloAttribute* attribute = FindAttribute("slice");
  if (attribute == nullptr) return bounds;
  const std::string& text = attribute->value;
  size_t pos = 0;
  while ((pos = text.find('[', pos)) != std::string::npos) {
    size_t end = text.find(']', pos);
    if (end == std::string::npos) break;
    std::vector<int64_t> values = ParseIntegers(std::string_view(text).substr(pos, end - pos));
    SliceBounds b;
    if (values.size() >= 2) {
      b.start = values[0];
      b.limit = values[1];
      b.stride = values.size() >= 3 ? values[2] : 1;
    }
    bounds.push_back(b);
    pos = end;
  }
  return bounds;
}

DotDimensions HloInstruction::dot_dimensions() const {
  DotDimensions dims;
  dims.lhs_batch = IntListAttribute("lhs_batch_dims");
  dims.rhs_batch = IntListAttribute("rhs_batch_dims");
  dims.lhs_contracting = IntListAttribute("lhs_contracting_dims");
  dims.rhs_contracting = IntListAttribute("rhs_contracting_dims");
  return dims;
}

void HloInstruction::SetDotDimensions(const DotDimensions& dims) {
  // XLA omits empty dimension lists from the text.
  auto set_or_remove = [this](const char* key, const std::vector<int64_t>& values) {
    if (values.empty()) {
      RemoveAttribute(key);
    } else {
      SetIntListAttribute(key, values);
    }
  };
  set_or_remove("lhs_batch_dims", dims.lhs_batch);
  set_or_remove("lhs_contracting_dims", dims.lhs_contracting);
  set_or_remove("rhs_batch_dims", dims.rhs_batch);
  set_or_remove("rhs_contracting_dims", dims.rhs_contracting);
}

std::string HloInstruction::comparison_direction() const {
  return RawAttribute("direction").value_or("");
}

std::vector<HloComputation*> HloInstruction::called_computations() const {
  std::vector<HloComputation*> result;
  for (const HloAttribute& attribute : attributes_) {
    for (HloComputation* c : attribute.computations) result.push_back(c);
  }
  return result;
}

HloComputation* HloInstruction::CalledComputation(std::string_view key) const {
  const HloAttribute* attribute = FindAttribute(key);
  if (attribute == nullptr || attribute->computations.empty()) return nullptr;
  return attribute->computations[0];
}

void HloInstruction::SetCalledComputation(std::string_view key, HloComputation* computation) {
  for (HloAttribute& attribute : attributes_) {
    if (attribute.key == key) {
      attribute.computations = {computation};
      attribute.braced = false;
      return;
    }
  }
  HloAttribute attribute;
  attribute.key = std::string(key);
  attribute.computations = {computation};
  auto position = std::find_if(attributes_.begin(), attributes_.end(), [](const HloAttribute& a) {
    return a.key == "metadata" || a.key == "frontend_attributes" || a.key == "backend_config";
  });
  attributes_.insert(position, std::move(attribute));
}

void HloInstruction::ReplaceCalledComputation(HloComputation* old_computation,
                                             HloComputation* new_computation) {
  for (HloAttribute& attribute : attributes_) {
    for (HloComputation*& c : attribute.computations) {
      if (c == old_computation) c = new_computation;
    }
  }
}

void HloInstruction::AddControlPredecessor(HloInstruction* predecessor) {
  AddUnique(&control_predecessors_, predecessor);
  AddUnique(&predecessor->control_successors_, this);
}

void HloInstruction::DropAllControlDependencies() {
  for (HloInstruction* p : control_predecessors_) RemoveOne(&p->control_successors_, this);
  for (HloInstruction* s : control_successors_) RemoveOne(&s->control_predecessors_, this);
  control_predecessors_.clear();
  control_successors_.clear();
}

bool HloInstruction::HasSideEffectNoRecurse() const {
  static const char* kSideEffecting[] = {
      "send", "send-done", "recv", "recv-done", "infeed", "outfeed", "trace",
      "rng", "rng-get-and-update-state", "all-reduce", "all-reduce-start",
      "all-reduce-done", "all-gather", "all-gather-start", "all-gather-done",
      "all-to-all", "collective-permute", "collective-permute-start",
      "collective-permute-done", "collective-broadcast", "reduce-scatter",
      "async-start", "async-update", "async-done", "copy-start", "copy-done",
      "after-all", "add-dependency", "optimization-barrier",
  };
  for (const char* op : kSideEffecting) {
    if (opcode_ == op) return true;
  }
  if (opcode_ == "custom-call") {
    std::optional<std::string> flag = RawAttribute("custom_call_has_side_effect");
    return flag.has_value() && *flag == "true";
  }
  return false;
}

bool HloInstruction::IsElementwise() const {
  static const char* kElementwise[] = {
      "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex",
      "convert", "cosine", "divide", "erf", "exponential", "exponential-minus-one",
      "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "maximum",
      "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
      "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt", "select",
      "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign", "sine",
      "sqrt", "subtract", "tan", "tanh", "xor", "bitcast-convert", "stochastic-convert",
      "reduce-precision", "clz",
  };
  for (const char* op : kElementwise) {
    if (opcode_ == op) {
      // bitcast-convert between widths changes the rank; only same-width
      // conversions are elementwise.
      if (opcode_ == "bitcast-convert") {
        return operand_count() == 1 && operand(0)->shape().rank() == shape_.rank();
      }
      return true;
    }
  }
  return false;
}

}  // namespace exla
