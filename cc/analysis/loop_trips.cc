#include "analysis/loop_trips.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "ir/computation.h"

namespace exla {
namespace {

std::optional<int64_t> ScalarConstant(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kConstant) || !instruction.shape().IsArray() ||
      instruction.shape().rank() != 0) {
    return std::nullopt;
  }
  const std::string& text = instruction.payload();
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) {
    return std::nullopt;
  }
  return std::strtoll(text.c_str(), nullptr, 10);
}

// backend_config={"known_trip_count":{"n":"12"}}, as XLA's own passes annotate loops.
int64_t KnownTripCount(const HloInstruction& loop) {
  const std::optional<std::string> config = loop.RawAttribute("backend_config");
  if (!config) return -1;
  size_t at = config->find("known_trip_count");
  if (at != std::string::npos) at = config->find("\"n\"", at);
  if (at == std::string::npos) return -1;
  at = config->find_first_of("0123456789", at + 3);
  if (at == std::string::npos) return -1;
  return std::strtoll(config->c_str() + at, nullptr, 10);
}

// The constant the counter in tuple element `index` of the loop's state starts from.
std::optional<int64_t> InitialCounter(const HloInstruction& loop, int64_t index) {
  const HloInstruction* state = loop.operand(0);
  if (!state->Is(HloOpcode::kTuple) || index >= state->operand_count()) return std::nullopt;
  return ScalarConstant(*state->operand(static_cast<int>(index)));
}

// The tuple index of `value` when it is get-tuple-element(parameter(0), k).
std::optional<int64_t> CounterIndex(const HloInstruction& value) {
  if (!value.Is(HloOpcode::kGetTupleElement) || !value.operand(0)->Is(HloOpcode::kParameter)) {
    return std::nullopt;
  }
  return value.IntAttribute("index");
}

}  // namespace

int64_t TripCount(const HloInstruction& loop) {
  if (const int64_t known = KnownTripCount(loop); known >= 0) return known;
  const HloComputation* condition = loop.CalledComputation("condition");
  const HloInstruction* compare = condition ? condition->root() : nullptr;
  if (compare == nullptr || !compare->Is(HloOpcode::kCompare)) return -1;
  std::optional<ComparisonDirection> direction = compare->comparison_direction();
  const HloInstruction* counter = compare->operand(0);
  const HloInstruction* bound = compare->operand(1);
  if (direction && (*direction == ComparisonDirection::kGt || *direction == ComparisonDirection::kGe)) {
    // `bound > counter` is `counter < bound`.
    std::swap(counter, bound);
    direction = *direction == ComparisonDirection::kGt ? ComparisonDirection::kLt
                                                       : ComparisonDirection::kLe;
  }
  if (!direction || (*direction != ComparisonDirection::kLt && *direction != ComparisonDirection::kLe)) {
    return -1;
  }
  const std::optional<int64_t> index = CounterIndex(*counter);
  const std::optional<int64_t> limit = ScalarConstant(*bound);
  if (!index || !limit) return -1;
  const std::optional<int64_t> start = InitialCounter(loop, *index);
  if (!start) return -1;
  // The counter steps by one, as the splitter's loops and XLA's own do.
  const int64_t trips = *limit - *start + (*direction == ComparisonDirection::kLe ? 1 : 0);
  return std::max<int64_t>(0, trips);
}

}  // namespace exla
