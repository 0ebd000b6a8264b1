#include "ir/instruction.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "ir/attribute_syntax.h"
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

}  // namespace

bool IsComputationAttribute(std::string_view key) {
  return key == "to_apply" || key == "condition" || key == "body" || key == "calls" ||
         key == "branch_computations" || key == "true_computation" ||
         key == "false_computation" || key == "select" || key == "scatter";
}

HloInstruction::HloInstruction(std::string name, std::string_view opcode_name, Shape shape)
    : name_(std::move(name)),
      opcode_(StringToHloOpcode(opcode_name).value_or(HloOpcode::kOther)),
      shape_(std::move(shape)) {
  if (opcode_ == HloOpcode::kOther) other_opcode_name_ = std::string(opcode_name);
}

std::string_view HloInstruction::opcode_name() const {
  if (opcode_ == HloOpcode::kOther) return other_opcode_name_;
  return HloOpcodeString(opcode_);
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
  if (std::optional<AttributeSyntaxError> error = CheckTypedAttribute(std::string(key), value)) {
    throw std::logic_error("malformed attribute " + std::string(key) + "=" + value + ": " +
                           error->message);
  }
  TypedAttributeValue typed = DecodeTypedAttribute(key, value);
  for (HloAttribute& attribute : attributes_) {
    if (attribute.key == key) {
      attribute.value = std::move(value);
      attribute.typed = std::move(typed);
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
  attribute.typed = std::move(typed);
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
  if (const auto* values = std::get_if<std::vector<int64_t>>(&attribute->typed)) return *values;
  return {};
}

std::optional<int64_t> HloInstruction::IntAttribute(std::string_view key) const {
  const HloAttribute* attribute = FindAttribute(key);
  if (attribute == nullptr) return std::nullopt;
  if (const auto* value = std::get_if<int64_t>(&attribute->typed)) return *value;
  return std::nullopt;
}

void HloInstruction::SetIntListAttribute(std::string_view key, const std::vector<int64_t>& values) {
  SetAttribute(key, FormatIntList(values));
}

void HloInstruction::SetIntAttribute(std::string_view key, int64_t value) {
  SetAttribute(key, std::to_string(value));
}

std::vector<SliceBounds> HloInstruction::slice() const {
  const HloAttribute* attribute = FindAttribute("slice");
  if (attribute == nullptr) return {};
  if (const auto* bounds = std::get_if<std::vector<SliceBounds>>(&attribute->typed)) return *bounds;
  return {};
}

void HloInstruction::SetSlice(const std::vector<SliceBounds>& bounds) {
  SetAttribute("slice", FormatSlice(bounds));
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

PaddingConfig HloInstruction::padding_config() const {
  const HloAttribute* attribute = FindAttribute("padding");
  if (attribute == nullptr) return {};
  if (const auto* config = std::get_if<PaddingConfig>(&attribute->typed)) return *config;
  return {};
}

std::optional<ComparisonDirection> HloInstruction::comparison_direction() const {
  const HloAttribute* attribute = FindAttribute("direction");
  if (attribute == nullptr) return std::nullopt;
  if (const auto* direction = std::get_if<ComparisonDirection>(&attribute->typed)) return *direction;
  return std::nullopt;
}

void HloInstruction::SetComparisonDirection(ComparisonDirection direction) {
  SetAttribute("direction", std::string(ComparisonDirectionString(direction)));
}

ComparisonOrder HloInstruction::comparison_order() const {
  const bool total = RawAttribute("type") == std::optional<std::string>("TOTALORDER") ||
                     RawAttribute("order") == std::optional<std::string>("TOTAL");
  return total ? ComparisonOrder::kTotal : ComparisonOrder::kPartial;
}

void HloInstruction::SetComparisonOrder(ComparisonOrder order) {
  RemoveAttribute("order");
  if (order == ComparisonOrder::kTotal) {
    SetAttribute("type", "TOTALORDER");
  } else if (RawAttribute("type") == std::optional<std::string>("TOTALORDER")) {
    RemoveAttribute("type");
  }
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
  switch (opcode_) {
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kRng:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
      return true;
    case HloOpcode::kOther:
      // An opcode newer than exla's table may well have effects (a new
      // collective, a new kind of send); assuming it has keeps dce from
      // deleting it, at the cost of keeping an unused pure one.
      return true;
    case HloOpcode::kCustomCall: {
      std::optional<std::string> flag = RawAttribute("custom_call_has_side_effect");
      return flag.has_value() && *flag == "true";
    }
    default:
      return false;
  }
}

bool HloInstruction::IsElementwise() const {
  switch (opcode_) {
    case HloOpcode::kAbs:
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kCbrt:
    case HloOpcode::kCeil:
    case HloOpcode::kClamp:
    case HloOpcode::kClz:
    case HloOpcode::kCompare:
    case HloOpcode::kComplex:
    case HloOpcode::kConvert:
    case HloOpcode::kCos:
    case HloOpcode::kDivide:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kFloor:
    case HloOpcode::kImag:
    case HloOpcode::kIsFinite:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kOr:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kPower:
    case HloOpcode::kReal:
    case HloOpcode::kRemainder:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSelect:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kSqrt:
    case HloOpcode::kSubtract:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kXor:
    case HloOpcode::kStochasticConvert:
    case HloOpcode::kReducePrecision:
      return true;
    case HloOpcode::kBitcastConvert:
      // bitcast-convert between widths changes the rank; only same-width
      // conversions are elementwise.
      return operand_count() == 1 && operand(0)->shape().rank() == shape_.rank();
    default:
      return false;
  }
}

}  // namespace exla
