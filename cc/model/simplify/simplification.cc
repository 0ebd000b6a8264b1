#include "model/simplify/simplification.h"

#include <memory>

#include "model/simplify/reshape_equivalents.h"
#include "model/simplify/reshape_of_reshape.h"
#include "model/simplify/call_inliner.h"
#include "model/simplify/common_subexpressions.h"
#include "model/simplify/conditional_to_select.h"
#include "model/simplify/constant_folding.h"
#include "model/simplify/dead_loop_elements.h"
#include "model/simplify/divide_by_constant.h"
#include "model/simplify/dynamic_slice_of_literals.h"
#include "model/simplify/expansion_calls.h"
#include "model/simplify/loop_constant_sinking.h"
#include "model/simplify/loop_forwarding.h"
#include "model/simplify/loop_invariant_code_motion.h"
#include "model/simplify/pad_into_reduce_window.h"
#include "model/simplify/reduce_of_concatenate.h"
#include "model/simplify/reduce_of_negate.h"
#include "model/simplify/reduce_of_reduce.h"
#include "model/simplify/reduce_of_reshape.h"
#include "model/simplify/reduce_of_transpose.h"
#include "model/simplify/regular_literals.h"
#include "model/simplify/single_trip_loops.h"
#include "model/simplify/sort_of_one.h"
#include "model/simplify/sort_simplifier.h"
#include "model/simplify/topk_decomposition.h"
#include "model/simplify/transpose_of_dot.h"
#include "model/simplify/transpose_of_transpose.h"
#include "model/simplify/tuple_simplifier.h"
#include "pass/pass_fix.h"
#include "pass/pass_pipeline.h"

namespace exla {
namespace {

// XLA's rewrites before fusion, in XLA's order. A rewrite XLA runs before
// fusion that the model should mirror is one HloPass in this folder and one
// line here (cc/model/README.md).
std::unique_ptr<HloPassPipeline> Simplification(std::set<std::string>* shared_expansions) {
  auto pipeline = std::make_unique<HloPassPipeline>("xla-cpu-simplification");
  pipeline->AddPass(std::make_unique<CallInliner>());
  pipeline->AddPass(std::make_unique<ConditionalToSelect>());
  pipeline->AddPass(std::make_unique<ExpansionCalls>(shared_expansions));
  pipeline->AddPass(std::make_unique<ConstantFolding>());
  // Before the algebraic simplifier: the literals a loop carries are
  // literals to its rewrites.
  pipeline->AddPass(std::make_unique<LoopConstantSinking>());
  // XLA's algebraic simplifier, where it changes what fusion folds and
  // stores.
  pipeline->AddPass(std::make_unique<RegularLiterals>());
  pipeline->AddPass(std::make_unique<ReshapeEquivalents>());
  // After ReshapeEquivalents: an identity broadcast between two reshapes is
  // gone, and the reshapes it made join the chains XLA merges.
  pipeline->AddPass(std::make_unique<ReshapeOfReshape>());
  // Before TransposeOfDot: XLA's simplifier runs to a fixed point, so a dot
  // read through a chain of transposes (an identity one, then a swap) is
  // folded as if the chain were one transpose.
  pipeline->AddPass(std::make_unique<TransposeOfTranspose>());
  pipeline->AddPass(std::make_unique<TransposeOfDot>());
  pipeline->AddPass(std::make_unique<SortOfOne>());
  // Before ReduceOfTranspose: a sum of a reshaped transpose is then a sum
  // of the transpose. Before ReduceOfReduce: a reduce of a transposed reduce
  // is then a reduce of the reduce, which it merges.
  pipeline->AddPass(std::make_unique<ReduceOfReshape>());
  pipeline->AddPass(std::make_unique<ReduceOfTranspose>());
  pipeline->AddPass(std::make_unique<ReduceOfReduce>());
  pipeline->AddPass(std::make_unique<ReduceOfConcatenate>());
  pipeline->AddPass(std::make_unique<ReduceOfNegate>());
  pipeline->AddPass(std::make_unique<PadIntoReduceWindow>());
  pipeline->AddPass(std::make_unique<DivideByConstant>());
  // XLA runs it after the algebraic simplifier, before the tuple simplifier
  // and the while loop simplifier, which drop the state the body no longer
  // reads.
  pipeline->AddPass(std::make_unique<LoopInvariantCodeMotion>());
  // A read forwarded to a loop's input can be a read of a tuple built in
  // place (an inlined loop's state), and the other way round; a loop's
  // element becomes dead once the tuples that read it are folded, and its
  // removal can leave another loop's result unread.
  auto forwarding = std::make_unique<HloPassFix>("tuple-and-loop-forwarding");
  forwarding->AddPass(std::make_unique<TupleSimplifier>());
  forwarding->AddPass(std::make_unique<LoopForwarding>());
  forwarding->AddPass(std::make_unique<DeadLoopElements>());
  pipeline->AddPass(std::move(forwarding));
  // XLA's simplification runs to a fixed point: a literal an inlined loop
  // of one trip passes through its state is a literal to constant folding
  // once the tuple reads are folded (the first slice's offset, 0 * size).
  pipeline->AddPass(std::make_unique<ConstantFolding>());
  // A literal folded from a reshape of one is regular to the simplifier in
  // turn (a band mask's column made a vector: {0, 1, 2, 3}, an iota).
  pipeline->AddPass(std::make_unique<RegularLiterals>());
  pipeline->AddPass(std::make_unique<DynamicSliceOfLiterals>());
  pipeline->AddPass(std::make_unique<TopKDecomposition>());
  pipeline->AddPass(std::make_unique<SortSimplifier>());
  pipeline->AddPass(std::make_unique<CommonSubexpressionElimination>());
  return pipeline;
}

}  // namespace

SimplifiedModule SimplifyAsXla(const HloModule& module) {
  SimplifiedModule simplified;
  simplified.module = module.Clone();
  // XLA's while loop simplifier turns loops of one trip into calls of their
  // bodies, which the inliner then inlines. Each call is added after its
  // computation's root; a copy lists the module in post order again, the
  // order its text would have and the one the model's schedule, which
  // breaks ties by that order, was measured on.
  if (SingleTripLoopToCall().Run(simplified.module.get())) simplified.module = simplified.module->Clone();
  Simplification(&simplified.shared_expansions)->Run(simplified.module.get(), /*dump_dir=*/"", /*records=*/nullptr);
  return simplified;
}

}  // namespace exla
