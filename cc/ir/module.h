// An HLO module: computations (one of them ENTRY) plus the header line.
#ifndef EXLA_IR_MODULE_H_
#define EXLA_IR_MODULE_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace exla {

// How the text was printed. XLA has two common styles: HloPrintOptions::
// ShortParsable() (bare names, no signatures, no operand shapes) and the
// default one (`%name`, `%comp (p: f32[]) -> f32[]`, operand shapes in some
// versions). The printer reproduces whichever style was parsed.
struct PrintStyle {
  bool percent_names = false;
  bool computation_signatures = false;
  bool operand_shapes = false;
  // `/*index=5*/` before every fifth operand (XLA's default print options).
  bool operand_index_annotations = false;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  // Header attributes after the module name, raw (`, entry_computation_layout=...`).
  const std::string& header_attributes() const { return header_attributes_; }
  void set_header_attributes(std::string text) { header_attributes_ = std::move(text); }
  // XLA's stack-frame index (FileNames, FunctionNames, FileLocations,
  // StackFrames), raw. jaxlib <= 0.10 prints it after the last computation
  // (the trailer), jaxlib >= 0.11 between the header and the first one (the
  // preamble); each is printed back where it was.
  const std::string& trailer() const { return trailer_; }
  void set_trailer(std::string text) { trailer_ = std::move(text); }
  const std::string& preamble() const { return preamble_; }
  void set_preamble(std::string text) { preamble_ = std::move(text); }

  const PrintStyle& style() const { return style_; }
  PrintStyle* mutable_style() { return &style_; }

  // Computations in print order (callees before callers).
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation, bool is_entry = false);
  // Adds a computation before `before` in print order (callees must print
  // before their callers for XLA's parser).
  HloComputation* AddComputationBefore(std::unique_ptr<HloComputation> computation,
                                       const HloComputation* before);
  void RemoveComputation(HloComputation* computation);
  HloComputation* FindComputation(const std::string& name) const;
  // How many instructions call `computation` (as a body, a condition, a
  // reducer...): XLA's loop passes leave alone a computation called twice.
  int CallerCount(const HloComputation* computation) const;

  // Returns `hint` if no instruction or computation uses it yet, otherwise
  // `hint.N` for the smallest free N; reserves the result.
  std::string UniqueName(const std::string& hint);
  void ReserveName(const std::string& name) { names_.insert(name); }
  void ReleaseName(const std::string& name) { names_.erase(name); }

  int64_t instruction_count() const;

  // A copy of the module, as parsing its printed text would give it (the
  // text of a module is what XLA compiles): instructions in post order,
  // users in that order, references to computations and control
  // predecessors written as the printer writes them, names reserved afresh.
  // Rewrites that work on a copy (the model's simplifications) make it
  // without printing and parsing again. Defined in module_clone.cc.
  std::unique_ptr<HloModule> Clone() const;

 private:
  std::string name_;
  std::string header_attributes_;
  std::string trailer_;
  std::string preamble_;
  PrintStyle style_;
  HloComputation* entry_ = nullptr;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int64_t> next_suffix_;
};

}  // namespace exla

#endif  // EXLA_IR_MODULE_H_
