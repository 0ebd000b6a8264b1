// Control flow: the instructions that run computations of their own as
// sequential code (a while loop its condition and body, a conditional one
// of its branches, a call its computation), as opposed to the scalar
// computations a reduce, sort, scatter or map applies per element.
//
// Rewrites and analyses that follow a program into loops and branches
// (inlining, constant folding, common subexpressions, flops, the memory
// model's schedule) name this set of opcodes here, once.
#ifndef EXLA_IR_CONTROL_FLOW_H_
#define EXLA_IR_CONTROL_FLOW_H_

#include <vector>

#include "ir/module.h"
#include "ir/opcode.h"

namespace exla {

// Whether `opcode` runs computations as control flow: while, conditional, call.
bool IsControlFlow(HloOpcode opcode);

// The computations `instruction` runs as control flow, in the order it runs
// them (a loop's condition, then its body); none for any other instruction.
std::vector<const HloComputation*> RunComputations(const HloInstruction& instruction);

// The entry and the computations control flow reaches from it, each once,
// breadth first.
std::vector<HloComputation*> ControlFlowComputations(const HloModule& module);

}  // namespace exla

#endif  // EXLA_IR_CONTROL_FLOW_H_
