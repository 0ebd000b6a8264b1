// HloModule::Clone (cc/ir/module_clone.cc): the copy is what parsing the
// module's printed text gives, in everything a rewrite or an analysis reads.
#include <memory>
#include <string>

#include "ir/computation.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/cc/test_harness.h"

namespace {

using exla::HloComputation;
using exla::HloInstruction;
using exla::HloModule;
using exla::HloOpcode;
using exla::ParseHloModule;
using exla::PrintHloModule;

std::string Names(const std::vector<HloInstruction*>& instructions) {
  std::string names;
  for (const HloInstruction* instruction : instructions) names += instruction->name() + " ";
  return names;
}

// Every fact about `module` that printing does not show: stored order,
// users, control successors, attributes as stored, roots, the entry.
std::string Describe(const HloModule& module) {
  std::string out = "entry=" + module.entry()->name() + "\n";
  for (const auto& computation : module.computations()) {
    out += computation->name() + (computation->is_entry() ? " ENTRY" : "") + " root=" +
           computation->root()->name() + "\n";
    for (const auto& instruction : computation->instructions()) {
      out += "  " + instruction->name() + " " + std::string(instruction->opcode_name()) + " " +
             instruction->shape().ToString() + " (" + instruction->payload() + ") operands: " +
             Names(instruction->operands()) + "users: " + Names(instruction->users()) +
             "successors: " + Names(instruction->control_successors());
      for (const auto& attribute : instruction->attributes()) {
        out += " " + attribute.key + "=" + attribute.value + (attribute.braced ? "[braced]" : "") +
               "[typed " + std::to_string(attribute.typed.index()) + "]";
        for (const HloComputation* called : attribute.computations) out += "@" + called->name();
      }
      out += "\n";
    }
  }
  return out;
}

constexpr char kModule[] = R"(HloModule m

f {
  p = f32[8]{0} parameter(0)
  ROOT e = f32[8]{0} exponential(p)
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  a = f32[8]{0} call(x), to_apply=f
  b = f32[8]{0} negate(a)
  ROOT r = f32[8]{0} add(a, b), control-predecessors={x}
}
)";

TEST(ModuleClone, ParsedModuleIsCopiedAsItIs) {
  std::unique_ptr<HloModule> module = ParseHloModule(kModule);
  std::unique_ptr<HloModule> copy = module->Clone();
  EXPECT_EQ(PrintHloModule(*copy), PrintHloModule(*module));
  EXPECT_EQ(Describe(*copy), Describe(*module));
}

TEST(ModuleClone, RewrittenModuleIsCopiedAsItsTextParses) {
  // A rewrite appends `s` after the root that reads it, gives `b` a control
  // predecessor (no attribute slot yet), drops the root's (its slot stays)
  // and renames the call's computation: stored order, users and attributes
  // all differ from what the printed module parses to, and the copy must
  // match the parse.
  std::unique_ptr<HloModule> module = ParseHloModule(kModule);
  HloComputation* entry = module->entry();
  HloInstruction* x = entry->FindInstruction("x");
  HloInstruction* b = entry->FindInstruction("b");
  HloInstruction* s = entry->Add(HloOpcode::kSin, x->shape(), {x}, "s");
  b->ReplaceOperand(0, s);
  b->AddControlPredecessor(entry->FindInstruction("a"));
  entry->root()->DropAllControlDependencies();
  module->FindComputation("f")->set_name("g");
  std::unique_ptr<HloModule> copy = module->Clone();
  std::unique_ptr<HloModule> parsed = ParseHloModule(PrintHloModule(*module));
  EXPECT_EQ(Describe(*copy), Describe(*parsed));
  EXPECT_EQ(PrintHloModule(*copy), PrintHloModule(*module));
  EXPECT_EQ(Names(copy->entry()->MakeInstructionPostOrder()), "x a s b r ");
  // Names are reserved afresh, as by the parser.
  EXPECT_EQ(copy->UniqueName("s"), parsed->UniqueName("s"));
}

TEST(ModuleClone, CopyIsIndependentOfTheOriginal) {
  std::unique_ptr<HloModule> module = ParseHloModule(kModule);
  std::unique_ptr<HloModule> copy = module->Clone();
  HloComputation* entry = copy->entry();
  entry->ReplaceInstruction(entry->FindInstruction("b"), entry->FindInstruction("a"));
  EXPECT_EQ(module->entry()->instruction_count(), 4);
  EXPECT_EQ(entry->instruction_count(), 3);
  EXPECT_TRUE(copy->entry()->FindInstruction("a")->CalledComputation("to_apply") == copy->FindComputation("f"));
}

}  // namespace
