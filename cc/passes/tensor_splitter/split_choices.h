// What a plan chooses for each tensor the splitter meets, shared by the
// pass (tensor_splitter.h), its strategies and the plan search.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_SPLIT_CHOICES_H_
#define EXLA_PASSES_TENSOR_SPLITTER_SPLIT_CHOICES_H_

#include <cstdint>
#include <map>
#include <string>

namespace exla {

// Dimensions to try first, by tensor ("computation/instruction", as
// SplitLoop names a loop's tensor): the plan search's structural choices
// (Options::split_dimensions). kKeepWhole instead of a dimension keeps the
// tensor whole: it is not split, and loops read its slices instead of
// computing it again (a loop that computes it writes it whole). That trades
// its memory for the work of recomputing it, which the plan search judges.
// kTwoPass, for a sum weighted by a softmax's terms (a dot over the
// dimension the softmax normalises, weighted_sums.h), leaves it to a loop
// after the one that computes the softmax's statistics, instead of
// accumulating it in that loop with a running rescaling: the logits are
// computed twice, but that loop keeps no accumulator of the sum's size.
using DimensionChoices = std::map<std::string, int64_t>;
constexpr int64_t kKeepWhole = -1;
constexpr int64_t kTwoPass = -2;

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_SPLIT_CHOICES_H_
