#include "model/simplify/pad_into_reduce_window.h"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "pass/dce.h"

namespace exla {
namespace {

// A reduce-window's `window={...}` attribute, one entry per dimension.
// Fields it does not interpret (rhs_reversal) are kept as written.
struct Window {
  std::vector<int64_t> size, stride, low, high, base_dilation, window_dilation;
  std::vector<std::string> other;
};

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(text);
  while (std::getline(stream, part, separator)) parts.push_back(part);
  return parts;
}

// `1x2x2x1` as numbers; nullopt unless it has `rank` of them.
std::optional<std::vector<int64_t>> Numbers(const std::string& text, size_t rank) {
  std::vector<int64_t> values;
  for (const std::string& part : Split(text, 'x')) {
    if (part.empty()) return std::nullopt;
    values.push_back(std::stoll(part));
  }
  if (values.size() != rank) return std::nullopt;
  return values;
}

std::optional<Window> ParseWindow(std::string text, size_t rank) {
  if (!text.empty() && text.front() == '{') text = text.substr(1, text.size() - 2);
  Window window{std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 0),
                std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1), {}};
  for (const std::string& field : Split(text, ' ')) {
    if (field.empty()) continue;
    const size_t equals = field.find('=');
    if (equals == std::string::npos) return std::nullopt;
    const std::string key = field.substr(0, equals);
    const std::string value = field.substr(equals + 1);
    std::optional<std::vector<int64_t>> numbers;
    if (key == "pad") {
      const std::vector<std::string> dims = Split(value, 'x');
      if (dims.size() != rank) return std::nullopt;
      for (size_t d = 0; d < rank; ++d) {
        // A negative edge prints as `-1_2`: split at the last underscore.
        const size_t underscore = dims[d].rfind('_');
        if (underscore == std::string::npos || underscore == 0) return std::nullopt;
        window.low[d] = std::stoll(dims[d].substr(0, underscore));
        window.high[d] = std::stoll(dims[d].substr(underscore + 1));
      }
      continue;
    }
    std::vector<int64_t>* target = key == "size"         ? &window.size
                                   : key == "stride"     ? &window.stride
                                   : key == "lhs_dilate" ? &window.base_dilation
                                   : key == "rhs_dilate" ? &window.window_dilation
                                                         : nullptr;
    if (target == nullptr) {
      window.other.push_back(field);
      continue;
    }
    numbers = Numbers(value, rank);
    if (!numbers) return std::nullopt;
    *target = *numbers;
  }
  return window;
}

bool AllEqual(const std::vector<int64_t>& values, int64_t value) {
  for (int64_t v : values) {
    if (v != value) return false;
  }
  return true;
}

std::string Joined(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t d = 0; d < values.size(); ++d) text += (d ? "x" : "") + std::to_string(values[d]);
  return text;
}

// XLA's printed form: the fields at their defaults are left out.
std::string FormatWindow(const Window& window) {
  std::string text = "{size=" + Joined(window.size);
  if (!AllEqual(window.stride, 1)) text += " stride=" + Joined(window.stride);
  if (!AllEqual(window.low, 0) || !AllEqual(window.high, 0)) {
    text += " pad=";
    for (size_t d = 0; d < window.low.size(); ++d) {
      text += (d ? "x" : "") + std::to_string(window.low[d]) + "_" + std::to_string(window.high[d]);
    }
  }
  if (!AllEqual(window.base_dilation, 1)) text += " lhs_dilate=" + Joined(window.base_dilation);
  if (!AllEqual(window.window_dilation, 1)) text += " rhs_dilate=" + Joined(window.window_dilation);
  for (const std::string& field : window.other) text += " " + field;
  return text + "}";
}

// The pad's value and the reduction's initial value are one value: the same
// instruction, or literals written alike.
bool SameValue(const HloInstruction& pad_value, const HloInstruction& init) {
  if (&pad_value == &init) return true;
  return pad_value.Is(HloOpcode::kConstant) && init.Is(HloOpcode::kConstant) &&
         pad_value.shape().element_type() == init.shape().element_type() && pad_value.payload() == init.payload();
}

bool HasInterior(const PaddingConfig& config) {
  for (const PaddingDimension& dim : config) {
    if (dim.interior != 0) return true;
  }
  return false;
}

// XLA turns the pair into a broadcast instead when the pad only widens
// dimensions of size 1 symmetrically, under a window without stride that
// covers one unpadded element: the model leaves that case as written.
bool EffectiveBroadcast(const HloInstruction& pad, const Window& window) {
  if (!AllEqual(window.stride, 1)) return false;
  const PaddingConfig config = pad.padding_config();
  const Shape& operand = pad.operand(0)->shape();
  for (size_t d = 0; d < config.size(); ++d) {
    const PaddingDimension& dim = config[d];
    if (dim.interior != 0 || dim.low != dim.high) return false;
    if (dim.low != 0 && operand.dim(static_cast<int>(d)) != 1) return false;
    if (dim.low != 0 && window.size[d] < dim.low + 1) return false;
    if (operand.dim(static_cast<int>(d)) != 1 && window.size[d] != 1) return false;
  }
  return true;
}

// The window of `reduce_window` with the pad it reads folded in; nullopt
// where XLA does not fold it.
std::optional<Window> FoldedWindow(const HloInstruction& reduce_window) {
  if (!reduce_window.Is(HloOpcode::kReduceWindow) || reduce_window.operand_count() != 2 ||
      !reduce_window.shape().IsArray()) {
    return std::nullopt;
  }
  const HloInstruction& pad = *reduce_window.operand(0);
  if (!pad.Is(HloOpcode::kPad) || !SameValue(*pad.operand(1), *reduce_window.operand(1))) return std::nullopt;
  const PaddingConfig config = pad.padding_config();
  const size_t rank = static_cast<size_t>(pad.shape().rank());
  if (config.size() != rank) return std::nullopt;
  std::optional<Window> window = ParseWindow(reduce_window.RawAttribute("window").value_or(""), rank);
  if (!window || EffectiveBroadcast(pad, *window)) return std::nullopt;
  // The backends cannot dilate a base twice.
  if (HasInterior(config) && !AllEqual(window->base_dilation, 1)) return std::nullopt;
  for (size_t d = 0; d < rank; ++d) {
    window->low[d] += window->base_dilation[d] * config[d].low;
    window->high[d] += window->base_dilation[d] * config[d].high;
    if (config[d].interior != 0) window->base_dilation[d] = 1 + config[d].interior;
  }
  return window;
}

}  // namespace

bool PadIntoReduceWindow::Run(HloModule* module) {
  bool any = false;
  for (const auto& computation : module->computations()) {
    bool changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      const std::optional<Window> window = FoldedWindow(*instruction);
      if (!window) continue;
      instruction->ReplaceOperand(0, instruction->operand(0)->operand(0));
      instruction->SetAttribute("window", FormatWindow(*window));
      changed = true;
    }
    if (changed) RemoveDeadInstructions(computation.get());
    any = any || changed;
  }
  return any;
}

}  // namespace exla
