// The answer of a check that may refuse: yes, or no with the reason why not.
//
// exla's passes explain every rewrite they leave out (the reasons end up in
// the pass log, see HloPass::Log); an empty string meaning "yes" was easy to
// get backwards, so the answer has its own type with an explicit ok().
#ifndef EXLA_PASS_WHY_NOT_H_
#define EXLA_PASS_WHY_NOT_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace exla {

class [[nodiscard]] WhyNot {
 public:
  // Yes: nothing stands in the way.
  static WhyNot Ok() { return WhyNot(); }
  // No, because of `reason` (a phrase for the log: "x is the computation's
  // result and too large to split").
  static WhyNot Because(std::string reason) { return WhyNot(std::move(reason)); }

  bool ok() const { return !reason_.has_value(); }
  // The reason; only for an answer that is not ok().
  const std::string& reason() const {
    if (!reason_.has_value()) throw std::logic_error("WhyNot::reason() of an ok answer");
    return *reason_;
  }

 private:
  WhyNot() = default;
  explicit WhyNot(std::string reason) : reason_(std::move(reason)) {}
  std::optional<std::string> reason_;
};

}  // namespace exla

#endif  // EXLA_PASS_WHY_NOT_H_
