#include "analysis/buffer_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "analysis/flops.h"
#include "analysis/xla_topk.h"
#include "ir/computation.h"

namespace exla {
namespace {

// XLA CPU sums more than this many elements per result as a tree (a
// reduce-window over windows of this size, then a reduce), for accuracy.
constexpr int64_t kTreeReductionWindow = 32;

// The block size of XLA's triangular solve expander (its default).
constexpr int64_t kTriangularSolveBlock = 128;

// Instructions that are a view of their operand's buffer: a reshape of a
// row-major array is a bitcast once XLA has assigned layouts, a tuple is a
// table of its operands' buffers, exla's bridge removes copies before XLA
// sees the module, XLA's simplifier removes identity transposes, slices
// and conversions.
bool IsView(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape:
    case HloOpcode::kCopy:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kSetDimensionSize:  // bounds a static dimension: no data moves
      return true;
    case HloOpcode::kTranspose: {  // the identity permutation: XLA removes it
      const std::vector<int64_t> dims = instruction.dimensions();
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != static_cast<int64_t>(i)) return false;
      }
      return true;
    }
    case HloOpcode::kSlice:  // of the whole operand: XLA removes it
      return instruction.operand_count() == 1 &&
             instruction.shape().dims() == instruction.operand(0)->shape().dims();
    case HloOpcode::kConvert:  // to its own type: XLA removes it
      return instruction.operand_count() == 1 &&
             instruction.operand(0)->shape().element_type() == instruction.shape().element_type();
    default:
      return false;
  }
}

// A transpose read only by dots and convolutions is folded into their
// dimension numbers (XLA's transpose folding): no buffer.
bool FoldedIntoDots(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kTranspose) || instruction.users().empty()) return false;
  if (instruction.parent()->root() == &instruction) return false;
  for (const HloInstruction* user : instruction.users()) {
    if (!user->Is(HloOpcode::kDot) && !user->Is(HloOpcode::kConvolution)) return false;
  }
  return true;
}

// XLA CPU computes a matrix-vector product (one side's free dimensions all
// of size 1, that side small) as a loop of its own, into which it fuses the
// producers of the matrix; other dots call a GEMM that reads buffers.
constexpr int64_t kSmallVectorBytes = 16 * 1024;

// A dot that contracts nothing but dimensions of size 1 is an outer product:
// XLA's simplifier drops the degenerate dimensions and rewrites it as a
// multiply of two broadcasts, an elementwise loop that fusion treats as such.
bool IsOuterProduct(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kDot) || instruction.operand_count() != 2) return false;
  const std::vector<int64_t>& contracting = instruction.dot_dimensions().lhs_contracting;
  const Shape& lhs = instruction.operand(0)->shape();
  for (int64_t d : contracting) {
    if (lhs.dim(static_cast<int>(d)) != 1) return false;
  }
  return true;
}

bool FusesMatrixOfDot(const HloInstruction& dot, int operand_index) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2) return false;
  const DotDimensions dims = dot.dot_dimensions();
  if (!dims.lhs_batch.empty()) return false;
  const HloInstruction* vector = dot.operand(1 - operand_index);
  const std::vector<int64_t>& contracting =
      operand_index == 0 ? dims.rhs_contracting : dims.lhs_contracting;
  int64_t free = vector->shape().ElementCount();
  for (int64_t d : contracting) free /= std::max<int64_t>(1, vector->shape().dim(static_cast<int>(d)));
  return free == 1 && vector->shape().ByteSize() <= kSmallVectorBytes;
}

// Consumers that read an element of the operand more than once per element
// they write: folding an expensive producer into them would recompute it.
bool ReusesOperandElements(const HloInstruction& consumer, int operand_index) {
  if (FusesMatrixOfDot(consumer, operand_index)) return false;
  switch (consumer.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kGather:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
      return true;
    default:
      return false;
  }
}

// Whether `consumer` folds its operand `operand_index` into its loop.
bool FusesOperand(const HloInstruction& consumer, int operand_index) {
  // Once the matrix is fused, the dot is a loop fusion that also takes in
  // the producers of the vector.
  if (FusesMatrixOfDot(consumer, 0) || FusesMatrixOfDot(consumer, 1)) return true;
  if (!FusesProducers(consumer)) return false;
  // A tree reduction's reduce-window reads its input from memory.
  if (IsTreeReduction(consumer)) return operand_index >= consumer.operand_count() / 2;
  switch (consumer.opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kScatter:
      // Operand 0 is the buffer written in place.
      return operand_index != 0;
    case HloOpcode::kGather:
      return operand_index != 0;  // the gathered array is read at random
    default:
      return true;
  }
}

// Whether every use of `producer` through `user` (looking through views) is
// folded into a loop, and none reuses elements when `expensive`.
bool FusedThrough(const HloInstruction& producer, const HloInstruction& user, bool expensive) {
  if (user.Is(HloOpcode::kTuple) || user.Is(HloOpcode::kGetTupleElement)) return false;
  if (FoldedIntoDots(user)) return false;  // the dot reads the producer's buffer
  if (IsView(user)) {
    if (user.parent()->root() == &user) return false;  // the view is a result: written out
    for (const HloInstruction* next : user.users()) {
      if (!FusedThrough(user, *next, expensive)) return false;
    }
    return true;
  }
  for (int i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) != &producer) continue;
    if (!FusesOperand(user, i) || (expensive && ReusesOperandElements(user, i))) return false;
  }
  return true;
}

bool FusedIntoUsers(const HloInstruction& instruction) {
  if (instruction.parent()->root() == &instruction) return false;
  if (instruction.users().empty()) return true;  // dead: XLA removes it
  const bool expensive = IsExpensive(instruction);
  if (expensive && instruction.user_count() > 1) return false;  // not duplicated
  for (const HloInstruction* user : instruction.users()) {
    if (!FusedThrough(instruction, *user, expensive)) return false;
  }
  return true;
}

int64_t GroupCount(const HloInstruction& convolution, const char* attribute) {
  return std::stoll(convolution.RawAttribute(attribute).value_or("1"));
}

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
  if (GroupCount(convolution, "batch_group_count") > 1) return false;
  const int64_t input = SpatialVolume(convolution.operand(0)->shape(), labels.substr(0, underscore));
  const int64_t kernel =
      SpatialVolume(convolution.operand(1)->shape(), labels.substr(underscore + 1, arrow - underscore - 1));
  return kernel > input;
}

}  // namespace

bool IsFusedMatrixVectorDot(const HloInstruction& instruction) {
  return FusesMatrixOfDot(instruction, 0) || FusesMatrixOfDot(instruction, 1);
}

bool IsLoopFusible(const HloInstruction& instruction) {
  if (instruction.IsElementwise() || IsOuterProduct(instruction)) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kReduce:
      return instruction.shape().IsArray();
    default:
      return false;
  }
}

bool FusesProducers(const HloInstruction& instruction) {
  if (instruction.IsElementwise() || IsOuterProduct(instruction)) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kReduce:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
    case HloOpcode::kMap:
      return true;
    default:
      return false;
  }
}

bool IsExpensive(const HloInstruction& instruction) {
  if (IsTranscendental(instruction)) return true;
  const bool floating = instruction.shape().IsArray() &&
                        (IsFloatingPointType(instruction.shape().element_type()) ||
                         IsComplexType(instruction.shape().element_type()));
  switch (instruction.opcode()) {
    case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt:
      return true;
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
      return floating;
    case HloOpcode::kReduce:
      return true;  // a reduction folded twice is computed twice
    default:
      return false;
  }
}

namespace {

// The longest dimension a reduction folds, and the partial results per
// result a tree of windows of kTreeReductionWindow leaves (windows cover
// each reduced dimension in steps of the window).
int64_t LongestReducedDimension(const HloInstruction& reduce) {
  int64_t longest = 0;
  const Shape& input = reduce.operand(0)->shape();
  for (int64_t d : reduce.dimensions()) {
    if (d >= 0 && d < input.rank()) longest = std::max(longest, input.dim(static_cast<int>(d)));
  }
  return longest;
}

int64_t TreePartials(const HloInstruction& reduce) {
  int64_t partials = 1;
  const Shape& input = reduce.operand(0)->shape();
  for (int64_t d : reduce.dimensions()) {
    if (d < 0 || d >= input.rank()) continue;
    partials *= (input.dim(static_cast<int>(d)) + kTreeReductionWindow - 1) / kTreeReductionWindow;
  }
  return partials;
}

}  // namespace

// XLA's tree reduction rewriter applies when some reduced dimension is
// longer than its window: a reduction of a 32x16 block is left whole.
bool IsTreeReduction(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kReduce) && instruction.shape().IsArray() &&
         instruction.operand_count() == 2 && instruction.operand(0)->shape().IsArray() &&
         LongestReducedDimension(instruction) > kTreeReductionWindow;
}

// Whether XLA CPU computes the dot `instruction` in f32: it has no bf16
// matrix multiply, so it converts a bf16 dot's operands to f32, multiplies
// in f32 and converts the product back.
bool IsWidenedDot(const HloInstruction& instruction) {
  return instruction.Is(HloOpcode::kDot) && instruction.shape().IsArray() &&
         instruction.shape().element_type() == PrimitiveType::kBF16;
}

int64_t LeafBytes(const HloInstruction& instruction, int64_t leaf, int64_t bytes) {
  // A bf16 dot writes an f32 product; a bf16 value that a dot reads is
  // written in f32 for it (the convert fuses into its producer).
  bool widened = IsWidenedDot(instruction);
  if (instruction.shape().IsArray() && instruction.shape().element_type() == PrimitiveType::kBF16) {
    for (const HloInstruction* user : instruction.users()) widened = widened || IsWidenedDot(*user);
  }
  if (widened) return 2 * bytes;
  if (!XlaRunsAsTopK(instruction)) return bytes;
  int64_t largest = 0;
  for (const HloInstruction* user : instruction.users()) {
    const bool element = user->Is(HloOpcode::kGetTupleElement);
    if (element && user->IntAttribute("index").value_or(-1) != leaf) continue;
    if (!element) largest = std::max(largest, user->shape().ByteSize());
    for (const HloInstruction* slice : element ? user->users() : std::vector<HloInstruction*>{}) {
      largest = std::max(largest, slice->shape().ByteSize());
    }
  }
  return std::min(bytes, largest);
}

int64_t PrologueBytes(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConvolution) || instruction.operand_count() != 2) return 0;
  const int64_t kernel = instruction.operand(1)->shape().ByteSize();
  // Only f32 grouped (depthwise) convolutions have a kernel of their own;
  // others become one dense convolution over a filter expanded by groups.
  const int64_t groups = GroupCount(instruction, "feature_group_count");
  if (groups > 1) return instruction.shape().element_type() != PrimitiveType::kF32 ? groups * kernel : 0;
  return KernelLargerThanInput(instruction) ? kernel : 0;
}

namespace {

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

// Bytes of the transposed copy XLA's layout assignment writes of the
// result of the convolution `instruction` before transposing it into
// place (see LayoutCopyOfOperandBytes).
int64_t LayoutCopyOfResultBytes(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConvolution) || instruction.operand_count() != 2) return 0;
  const std::string result = LabelParts(instruction)[2];
  return result.empty() || InOrder(result, "b", "f") ? 0 : instruction.shape().ByteSize();
}

// The custom call target of `instruction`, quoted, or "".
// The target of the custom call `instruction`, quoted as printed, or "".
std::string CustomCallTarget(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kCustomCall)) return "";
  return instruction.RawAttribute("custom_call_target").value_or("");
}

// The rows, columns and element bytes of the matrix (operand 0) a QR
// custom call reads, or all 0 when it has no such operand.
// The rows, columns and element bytes of the matrix (operand 0) a QR
// custom call reads; zeros when it reads none.
std::array<int64_t, 3> QrOperand(const HloInstruction& instruction) {
  if (instruction.operand_count() < 1 || !instruction.operand(0)->shape().IsArray() ||
      instruction.operand(0)->shape().rank() < 2) {
    return {0, 0, 0};
  }
  const Shape& a = instruction.operand(0)->shape();
  const int64_t element = a.ByteSize() / std::max<int64_t>(1, a.ElementCount());
  return {a.dim(a.rank() - 2), a.dim(a.rank() - 1), element};
}

// Scratch of the instructions XLA expands into several (see ScratchBytes).
int64_t ExpansionScratchBytes(const HloInstruction& instruction) {
  // XLA CPU expands Cholesky and triangular solves into loops over blocks
  // that keep copies of the matrices beside the result.
  if (instruction.Is(HloOpcode::kCholesky)) return 2 * instruction.shape().ByteSize();
  if (instruction.Is(HloOpcode::kTriangularSolve) && instruction.operand_count() == 2) {
    return instruction.operand(0)->shape().ByteSize() + instruction.shape().ByteSize();
  }
  // A convolution over batch groups (the filter gradient of a depthwise
  // convolution) becomes one dense convolution whose result is groups times
  // larger, then a select of the diagonal blocks before the reduction.
  if (instruction.Is(HloOpcode::kConvolution) && GroupCount(instruction, "batch_group_count") > 1) {
    return 2 * GroupCount(instruction, "batch_group_count") * instruction.shape().ByteSize();
  }
  // XLA CPU's top-k kernel takes f32 only; XLA decomposes any other top-k
  // into a sort of the whole operand with an s32 iota of indices, then
  // slices of the k leading elements: the sorted values and indices.
  if (instruction.Is(HloOpcode::kTopK) && instruction.operand_count() == 1 &&
      instruction.operand(0)->shape().IsArray() &&
      instruction.operand(0)->shape().element_type() != PrimitiveType::kF32) {
    const Shape& operand = instruction.operand(0)->shape();
    return operand.ByteSize() + 4 * operand.ElementCount();
  }
  if (IsTreeReduction(instruction)) {  // the reduce-window's partial sums
    const int64_t partials = TreePartials(instruction);
    return partials * instruction.shape().ByteSize();
  }
  if (!instruction.Is(HloOpcode::kSelectAndScatter) || instruction.operand_count() < 2) return 0;
  // One s32 iota per dimension of the operand; the reduce-window's value and
  // index per source element; the indices concatenated for the scatter.
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& source = instruction.operand(1)->shape();
  const int64_t rank = operand.rank();
  const int64_t index_bytes = 4 * rank;
  return operand.ElementCount() * index_bytes +
         source.ElementCount() * (source.ByteSize() / std::max<int64_t>(1, source.ElementCount()) + index_bytes) +
         source.ElementCount() * index_bytes;
}

}  // namespace

int64_t ScratchBytes(const HloInstruction& instruction) {
  return LayoutCopyOfResultBytes(instruction) + ExpansionScratchBytes(instruction);
}

int64_t ExpansionLoopStateElements(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kCholesky)) return 5;
  if (instruction.Is(HloOpcode::kTriangularSolve)) return 3;
  if (!instruction.Is(HloOpcode::kCustomCall)) return 0;
  const std::string target = instruction.RawAttribute("custom_call_target").value_or("");
  return target == "\"Qr\"" || target == "\"ProductOfElementaryHouseholderReflectors\"" ? 3 : 0;
}

int64_t ExpansionEarlyBytes(const HloInstruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.rank() < 2) return 0;
  const int64_t n = shape.dim(shape.rank() - 1);
  // The pred[n,n] mask of the lower triangle a Cholesky loop carries.
  if (instruction.Is(HloOpcode::kCholesky)) return n * n;
  if (!instruction.Is(HloOpcode::kTriangularSolve) || instruction.operand_count() != 2) return 0;
  // The inverses of a triangular matrix's diagonal blocks, which the solve
  // accumulates into a zero-filled array of blocks of up to 128 rows.
  const Shape& a = instruction.operand(0)->shape();
  const int64_t m = a.dim(a.rank() - 1);
  const int64_t element_bytes = a.ByteSize() / std::max<int64_t>(1, a.ElementCount());
  return a.ElementCount() / std::max<int64_t>(1, m) * std::min<int64_t>(m, kTriangularSolveBlock) * element_bytes;
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

std::vector<int64_t> ExpansionSmallValues(const HloInstruction& instruction) {
  // A Cholesky factorisation's loop also holds a pred[1,1] that flags a
  // non-positive pivot (its lower-triangle mask: ExpansionEarlyBytes).
  if (instruction.Is(HloOpcode::kCholesky)) return {4, 1, 1};
  // Each step of a QR loop copies its counter before adding to it; Qr
  // writes the norm of the column, its square root, the reflector's
  // diagonal and tau (scalars), the column and the reflector (m), its
  // product with the matrix and the updated taus (n); the product of
  // reflectors a column of Y (m) and its product with T (n). (Qr's
  // updated m x n matrix and its copy into the loop's state are not
  // counted: XLA placed them in the allocations of the entry's results,
  // which it lends to temporaries that end before the result is written,
  // and which the model does not lend.)
  const std::string target = CustomCallTarget(instruction);
  const auto [m, n, e] = QrOperand(instruction);
  if (target == "\"Qr\"") return {4, 4, 1, e, e, e, e, m * e, m * e, n * e, n * e};
  if (target == "\"ProductOfElementaryHouseholderReflectors\"") return {4, 4, 1, m * e, n * e};
  if (ExpansionLoopStateElements(instruction) > 0) return {4, 1};
  if (instruction.Is(HloOpcode::kRngBitGenerator) &&
      instruction.RawAttribute("algorithm").value_or("") == "rng_philox") {
    return {4, 4};
  }
  return {};
}

Holding HoldingOf(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
      return Holding::kParameter;
    case HloOpcode::kConstant:
      return Holding::kConstant;
    default:
      break;
  }
  if (IsView(instruction) || FoldedIntoDots(instruction)) return Holding::kOperand;
  // A top-k numbers its elements itself: the iota of indices goes.
  if (instruction.Is(HloOpcode::kIota) && instruction.user_count() == 1 &&
      XlaRunsAsTopK(*instruction.users()[0])) {
    return Holding::kFused;
  }
  if (IsLoopFusible(instruction) && FusedIntoUsers(instruction)) return Holding::kFused;
  return Holding::kOwn;
}

}  // namespace exla
