#include "ir/verifier_structure.h"

#include <cctype>
#include <unordered_map>
#include <vector>

namespace exla {
namespace verifier_internal {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Offset of `name` where a line (after blanks and optional `prefix` words and
// '%') defines it, searching from `from`; npos if none.
size_t FindDefinition(std::string_view text, const std::string& name,
                      std::initializer_list<std::string_view> prefixes, size_t from) {
  size_t line = from;
  while (line < text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    size_t i = line;
    while (i < end && (text[i] == ' ' || text[i] == '\t')) ++i;
    for (std::string_view prefix : prefixes) {
      if (text.substr(i, prefix.size()) == prefix) i += prefix.size();
    }
    if (i < end && text[i] == '%') ++i;
    if (text.substr(i, name.size()) == name &&
        (i + name.size() >= end || !IsNameChar(text[i + name.size()]))) {
      return i;
    }
    line = end + 1;
  }
  return std::string_view::npos;
}

std::string Position(std::string_view text, size_t offset) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) +
         ": ";
}

}  // namespace

// Depth-first search over called computations; iterative, because the
// chain of calls comes from the input and may be arbitrarily long.
void CheckCallGraphIsAcyclic(const HloModule& module, const Report& report) {
  enum class Mark { kNew, kOpen, kDone };
  std::unordered_map<const HloComputation*, Mark> marks;
  for (const auto& start : module.computations()) {
    if (marks[start.get()] != Mark::kNew) continue;
    // (computation, callees, next callee index)
    struct Frame {
      const HloComputation* computation;
      std::vector<HloComputation*> callees;
      size_t next = 0;
    };
    std::vector<Frame> stack;
    auto push = [&](const HloComputation* computation) {
      marks[computation] = Mark::kOpen;
      Frame frame{computation, {}};
      for (const auto& instruction : computation->instructions()) {
        for (HloComputation* callee : instruction->called_computations()) {
          frame.callees.push_back(callee);
        }
      }
      stack.push_back(std::move(frame));
    };
    push(start.get());
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.callees.size()) {
        marks[top.computation] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const HloComputation* callee = top.callees[top.next++];
      if (callee == nullptr) continue;
      Mark mark = marks[callee];
      if (mark == Mark::kOpen) {
        std::string path;
        bool on_cycle = false;
        for (const Frame& frame : stack) {
          on_cycle |= frame.computation == callee;
          if (on_cycle) path += "'" + frame.computation->name() + "' -> ";
        }
        report(callee, nullptr, "recursive computation call: " + path + "'" + callee->name() + "'");
      } else if (mark == Mark::kNew) {
        push(callee);
      }
    }
  }
}

// Operands (and control predecessors) must come from this computation and
// must not depend on the instruction itself. Iterative depth-first search.
void CheckOperandGraphIsAcyclic(const HloComputation& computation, const Report& report) {
  enum class Mark { kNew, kOpen, kDone };
  std::unordered_map<const HloInstruction*, Mark> marks;
  auto inputs_of = [](const HloInstruction* instruction) {
    std::vector<const HloInstruction*> inputs(instruction->operands().begin(),
                                              instruction->operands().end());
    inputs.insert(inputs.end(), instruction->control_predecessors().begin(),
                  instruction->control_predecessors().end());
    return inputs;
  };
  for (const auto& instruction : computation.instructions()) {
    for (const HloInstruction* operand : instruction->operands()) {
      if (operand == nullptr || operand->parent() != &computation) {
        report(&computation, instruction.get(),
              "an operand is not an instruction of this computation");
        return;  // the graph below is not walkable
      }
    }
  }
  for (const auto& start : computation.instructions()) {
    if (marks[start.get()] != Mark::kNew) continue;
    std::vector<std::pair<const HloInstruction*, std::vector<const HloInstruction*>>> stack;
    marks[start.get()] = Mark::kOpen;
    stack.push_back({start.get(), inputs_of(start.get())});
    while (!stack.empty()) {
      auto& [instruction, pending] = stack.back();
      if (pending.empty()) {
        marks[instruction] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const HloInstruction* input = pending.back();
      pending.pop_back();
      Mark mark = marks[input];
      if (mark == Mark::kOpen) {
        report(&computation, input,
              input == instruction
                  ? "the instruction is its own operand (a cycle)"
                  : "a cycle: the instruction depends on itself through '" +
                        instruction->name() + "'");
        return;  // one cycle report per computation is enough
      }
      if (mark == Mark::kNew) {
        marks[input] = Mark::kOpen;
        stack.push_back({input, inputs_of(input)});
      }
    }
  }
}

std::string DefinitionPosition(std::string_view text, const std::string& computation,
                               const std::string& instruction) {
  if (text.empty() || computation.empty()) return "";
  size_t at = FindDefinition(text, computation, {"ENTRY "}, 0);
  if (at != std::string_view::npos && !instruction.empty()) {
    at = FindDefinition(text, instruction, {"ROOT "}, at);
  }
  return at == std::string_view::npos ? "" : Position(text, at);
}

}  // namespace verifier_internal
}  // namespace exla
