#include "model/expand/convolution_layout.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace exla {
namespace {

// The product of the dimensions of `shape` that `labels` marks spatial (digits).
int64_t SpatialVolume(const Shape& shape, const std::string& labels) {
  int64_t volume = 1;
  for (size_t i = 0; i < labels.size() && static_cast<int64_t>(i) < shape.rank(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(labels[i]))) volume *= shape.dim(static_cast<int>(i));
  }
  return volume;
}

// XLA's simplifier swaps the operands of a convolution whose kernel window
// covers more positions than its input has (a 3x3 kernel over a 2x2 image):
// the kernel becomes the image, read reversed, and XLA CPU writes that
// reversed copy of the kernel to memory first.
bool KernelLargerThanInput(const HloInstruction& convolution) {
  const std::string labels = convolution.RawAttribute("dim_labels").value_or("");
  const std::string window = convolution.RawAttribute("window").value_or("");
  const size_t underscore = labels.find('_');
  const size_t arrow = labels.find("->");
  if (underscore == std::string::npos || arrow == std::string::npos || underscore > arrow) return false;
  if (window.find("dilate") != std::string::npos || window.find("stride") != std::string::npos) return false;
  if (ConvolutionGroupCount(convolution, "batch_group_count") > 1) return false;
  const int64_t input = SpatialVolume(convolution.operand(0)->shape(), labels.substr(0, underscore));
  const int64_t kernel =
      SpatialVolume(convolution.operand(1)->shape(), labels.substr(underscore + 1, arrow - underscore - 1));
  return kernel > input;
}

// Whether the dimension labels `labels` (one part of a convolution's
// dim_labels) are `first`, the spatial dimensions, then `last`.
bool InOrder(const std::string& labels, const std::string& first, const std::string& last) {
  if (labels.size() < first.size() + last.size() || labels.compare(0, first.size(), first) != 0 ||
      labels.compare(labels.size() - last.size(), last.size(), last) != 0) {
    return false;
  }
  return std::all_of(labels.begin() + first.size(), labels.end() - last.size(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// The three parts of a convolution's dim_labels (input, kernel, result),
// or empty strings when it has none.
std::vector<std::string> LabelParts(const HloInstruction& convolution) {
  const std::string labels = convolution.RawAttribute("dim_labels").value_or("");
  const size_t underscore = labels.find('_');
  const size_t arrow = labels.find("->");
  if (underscore == std::string::npos || arrow == std::string::npos || underscore > arrow) return {"", "", ""};
  return {labels.substr(0, underscore), labels.substr(underscore + 1, arrow - underscore - 1),
          labels.substr(arrow + 2)};
}

}  // namespace

int64_t ConvolutionGroupCount(const HloInstruction& convolution, const char* attribute) {
  return std::stoll(convolution.RawAttribute(attribute).value_or("1"));
}

int64_t PrologueBytes(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConvolution) || instruction.operand_count() != 2) return 0;
  const int64_t kernel = instruction.operand(1)->shape().ByteSize();
  // Only f32 grouped (depthwise) convolutions have a kernel of their own;
  // others become one dense convolution over a filter expanded by groups.
  const int64_t groups = ConvolutionGroupCount(instruction, "feature_group_count");
  if (groups > 1) return instruction.shape().element_type() != PrimitiveType::kF32 ? groups * kernel : 0;
  return KernelLargerThanInput(instruction) ? kernel : 0;
}

int64_t LayoutCopyOfOperandBytes(const HloInstruction& instruction, int operand) {
  if (!instruction.Is(HloOpcode::kConvolution) || instruction.operand_count() != 2 || operand < 0 || operand > 1) {
    return 0;
  }
  const std::vector<std::string> parts = LabelParts(instruction);
  if (parts[operand].empty()) return 0;
  const bool in_order = operand == 0 ? InOrder(parts[0], "b", "f") : InOrder(parts[1], "", "io");
  return in_order ? 0 : instruction.operand(operand)->shape().ByteSize();
}

int64_t LayoutCopyOfResultBytes(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConvolution) || instruction.operand_count() != 2) return 0;
  const std::string result = LabelParts(instruction)[2];
  return result.empty() || InOrder(result, "b", "f") ? 0 : instruction.shape().ByteSize();
}

}  // namespace exla
