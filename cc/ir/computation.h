// An HLO computation: a DAG of instructions with parameters and a root.
#ifndef EXLA_IR_COMPUTATION_H_
#define EXLA_IR_COMPUTATION_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/instruction.h"

namespace exla {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }
  bool is_entry() const { return is_entry_; }
  void set_is_entry(bool is_entry) { is_entry_ = is_entry; }

  // Trailing text after the closing brace, e.g. `, execution_thread="x"`.
  const std::string& suffix() const { return suffix_; }
  void set_suffix(std::string suffix) { suffix_ = std::move(suffix); }

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }

  // Instructions in stored order (the order they were parsed or added).
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int instruction_count() const { return static_cast<int>(instructions_.size()); }
  // Parameters sorted by parameter number.
  std::vector<HloInstruction*> parameters() const;
  HloInstruction* parameter(int64_t number) const;

  // Adds an instruction; its name is made unique within the module.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // Builder shortcut: `Add(HloOpcode::kAdd, shape, {a, b})`.
  HloInstruction* Add(HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands,
                      std::string name_hint = "");
  // Removes an instruction that has no users and is not the root.
  void RemoveInstruction(HloInstruction* instruction);
  // Replaces `old_instruction` by `new_instruction` everywhere and removes it.
  void ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* new_instruction);
  HloInstruction* FindInstruction(const std::string& name) const;

  // Operands before users; stored order is kept wherever it is already valid,
  // so an unchanged module prints exactly as it was parsed.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

 private:
  friend class HloModule;
  friend class HloParser;

  // Adds a parsed instruction under its printed name (names in parsed text
  // are already unique).
  void AddParsedInstruction(std::unique_ptr<HloInstruction> instruction);

  std::string name_;
  std::string suffix_;
  bool is_entry_ = false;
  HloModule* parent_ = nullptr;
  HloInstruction* root_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
};

// Whether `value` is computed from any of `sources`, itself included
// (following operands, within its computation).
bool DependsOn(const HloInstruction* value, const std::vector<const HloInstruction*>& sources);

}  // namespace exla

#endif  // EXLA_IR_COMPUTATION_H_
