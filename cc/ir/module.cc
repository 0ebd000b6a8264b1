#include "ir/module.h"

#include <algorithm>

namespace exla {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation,
                                          bool is_entry) {
  if (is_entry) computation->set_is_entry(true);
  return AddComputationBefore(std::move(computation), nullptr);
}

HloComputation* HloModule::AddComputationBefore(std::unique_ptr<HloComputation> computation,
                                                const HloComputation* before) {
  computation->parent_ = this;
  ReserveName(computation->name());
  HloComputation* raw = computation.get();
  auto position = std::find_if(computations_.begin(), computations_.end(),
                               [&](const auto& c) { return c.get() == before; });
  computations_.insert(position, std::move(computation));
  if (raw->is_entry()) entry_ = raw;
  return raw;
}

void HloModule::RemoveComputation(HloComputation* computation) {
  if (computation == entry_) return;
  for (const auto& instruction : computation->instructions()) ReleaseName(instruction->name());
  ReleaseName(computation->name());
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [&](const auto& c) { return c.get() == computation; }),
                      computations_.end());
}

HloComputation* HloModule::FindComputation(const std::string& name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::string HloModule::UniqueName(const std::string& hint) {
  if (names_.insert(hint).second) return hint;
  // Strip a numeric ".N" suffix so that names derived from "add.3" become
  // "add.4", "add.5", ... rather than "add.3.1".
  std::string base = hint;
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot + 1 < base.size() &&
      std::all_of(base.begin() + dot + 1, base.end(), ::isdigit)) {
    base = base.substr(0, dot);
  }
  int64_t& next = next_suffix_[base];
  while (true) {
    std::string candidate = base + "." + std::to_string(++next);
    if (names_.insert(candidate).second) return candidate;
  }
}

int64_t HloModule::instruction_count() const {
  int64_t total = 0;
  for (const auto& c : computations_) total += c->instruction_count();
  return total;
}

int HloModule::CallerCount(const HloComputation* computation) const {
  int callers = 0;
  for (const auto& caller : computations_) {
    for (const auto& instruction : caller->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) callers += callee == computation;
    }
  }
  return callers;
}

}  // namespace exla
