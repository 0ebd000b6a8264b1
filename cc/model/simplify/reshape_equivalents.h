// XLA's algebraic simplifier makes reshapes of instructions that move no
// element.
//
// Two instructions keep every element of their operand where it is
// (AlgebraicSimplifierVisitor's HandleBroadcast and HandleReduce):
// - a broadcast whose result has as many elements as its operand, the
//   operand's dimensions in order: it only inserts dimensions of size 1;
// - a reduce of one array whose result has as many elements as the array:
//   it reduces dimensions of size 1, and the init value is the reducer's
//   identity, so each element comes out as it went in.
// XLA replaces each by a reshape of its operand, which layout assignment
// makes a bitcast. The memory model must see it: as a broadcast or a
// reduce the value gets a buffer where nothing fuses it (an element of a
// loop's state, the entry's result), where XLA reads the operand's own
// buffer: an entry parameter's, or the state a loop leaves.
#ifndef EXLA_MODEL_SIMPLIFY_RESHAPE_EQUIVALENTS_H_
#define EXLA_MODEL_SIMPLIFY_RESHAPE_EQUIVALENTS_H_

#include <string_view>

#include "ir/module.h"
#include "pass/pass.h"

namespace exla {

// Replaces each broadcast and reduce that moves no element by a reshape of
// its operand (by the operand itself where the shapes are equal), and
// removes what this leaves dead.
class ReshapeEquivalents : public HloPass {
 public:
  std::string_view name() const override { return "reshape-equivalents"; }
  bool Run(HloModule* module) override;
};

}  // namespace exla

#endif  // EXLA_MODEL_SIMPLIFY_RESHAPE_EQUIVALENTS_H_
