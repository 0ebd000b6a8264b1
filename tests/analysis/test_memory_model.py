"""exla's memory model (``exla.predict_peak``) against XLA's own buffer assignment.

On every module of `experiments/corpus/memory_corpus.py` (the corpus programs as
lowered, rewritten by exla's pipeline at the forced threshold, and their f64
variants: TensorFlow, tf_keras, GPflow, TFP, JAX, flax, optax), the model's
predicted peak is compared with XLA's planned peak, constants included
(`exla.bridge.xla.planned_memory`). The target of issue 27: within 10% for at
least 90% of the modules and never more than 10% below; and none more than
1.5x above, but for the modules named in OVER_PREDICTED with the reason.

The corpus is what the model was tuned on; its figures on modules it was
never tuned to are `test_memory_model_heldout.py`'s.

The XLA figures are computed once for this file (one compilation per module).
"""

from __future__ import annotations

import math

import pytest

from experiments.corpus import memory_corpus
from tests.analysis._over_prediction import assert_bounded
from tests._extension import load_extension  # noqa: E402

load_extension()

# The distribution last measured (this test's modules, 2026-11-29, after
# the model learnt XLA's split of a reduce of a concatenation and of a sum of
# a negation, its unfused long concatenations, reshaped loop results and two
# refinements of its rule for expensive producers; then XLA's copies of a
# cheap producer into each reader, a pad folded into its reduce-window, a
# convolution operand computed into its layout copy and a tree reduction's
# step of its own, which move 43 modules and leave the count; then dead
# loop state dropped, a top-k without a kernel sorted in place and a loop
# started in place from a broadcast its other readers recompute, which
# bring three of jax_scipy_special's modules within): 152 modules, 141
# (92.8%) within 10%, none more than 10% below (the lowest 0.909x), the
# highest 1.63x. Then, from the study of held-out draws 2 and 3 (XLA's
# algebraic simplifier making a broadcast or reduce that moves no element a
# reshape, the transpose of a product the product swapped, two transposes
# one; a concatenation, pad or reduction read twice written out; a loop
# written over an operand only where every read is elementwise, never over
# a loop outlined for threads), 142 (93.4%): tfp_log_probs' rewritten
# module comes within. Then XLA's triangular solve expander, whose padded
# 128-row blocks the model had counted too small (hand-written solves were
# as low as 0.39x, none in the corpus): three tiny batched solves
# (tfp_log_probs) leave the band, one comes back once a one-block solve with
# short rows scales its matrix in place: 140 (92.1%). Then, from the study
# of draw 5, XLA's refusal to duplicate a producer whose copies would read
# more unless it fuses on every path to its readers
# (globally_unfusible.h): it brings held-out modules up from below 0.9x,
# and takes three corpus modules out of the band on the high side
# (gpflow_gpr_matern52_grads, 1.11x and 1.21x, whose values it now writes
# sit at a Cholesky the model counts one matrix too many; tfp_log_probs
# rewritten, 1.102x): 137 (90.1%), the target itself. Then, from the study
# of draw 6 (stop 53): a regular literal is an iota or a broadcast, an
# unblocked Cholesky builds a lower factor in its result, and XLA's schedule
# starts from the parameters, then the literals, with fused loops not
# waiting for their scalar literals: tfp_log_probs rewritten and
# gpflow_gpr_matern52_grads original (1.099x, at the edge) come within: 139
# (91.4%). Then, from the study of draws 8 and 9 (stop 54): an expensive
# value under a cheap one XLA copies into a reader is written once, which
# takes mlp_adam_step from 1.630x to 1.619x; still 139.
# Before: 140, 142, 138, 137, 139. The bar (MIN_WITHIN, 138) is one
# module above the target (ceil(0.9 x 152) = 137); never lower it to let a
# change through.
TARGET_WITHIN = 0.90
MEASURED_WITHIN = 139
MIN_WITHIN = MEASURED_WITHIN - 1
MIN_MODULES = 148
"""The corpus has 152 distinct modules (jaxlib 0.7.1, every framework
installed); a few may merge or part with another framework version."""

MAX_RATIO = 1.5
"""No module predicted more than this much above XLA: an over-prediction
makes exla split a program that would have fit, and past 1.5x it is the
model that is wrong, not a detail of packing."""

OVER_PREDICTED = {
    "mlp_adam_step": (1.65, "XLA lets the ReluGrad loop fusion write its f32[128,64] result "
                            "into the buffer of the first layer's product, which dies there "
                            "(an elementwise fusion in place of an operand); the model keeps "
                            "both (1.61x, original and f64)"),
}
"""Programs allowed above MAX_RATIO: (their own bound, why)."""

MAX_PREDICT_SECONDS = 2.0
"""The planner asks the model about many plans, so each answer must take
milliseconds: the slowest corpus module (jax_scipy_special, a deep chain of
reused values) takes about 80 ms on a 2-core machine. A walk over every
path of a loop repeated per question took it to 75 s (stop 54)."""


@pytest.fixture(scope="module")
def comparisons() -> list[memory_corpus.Comparison]:
    return [memory_corpus.compare(m) for m in memory_corpus.modules()]


def _summary(comparisons) -> str:
    ordered = sorted(comparisons, key=lambda c: c.ratio)
    lines = [f"{len(comparisons)} modules, {sum(c.within for c in comparisons)} within "
             f"{memory_corpus.TOLERANCE:.0%}, {sum(c.too_low for c in comparisons)} more than "
             f"{memory_corpus.TOLERANCE:.0%} below"]
    lines += [f"  {c.ratio:6.3f}  {c.module.label}: predicted {c.predicted}, XLA {c.xla}"
              for c in ordered if not c.within]
    return "\n".join(lines)


def test_docstring_examples():
    import doctest

    import exla.predict

    result = doctest.testmod(exla.predict)
    assert result.attempted > 0 and result.failed == 0


def test_corpus_is_large_and_varied(comparisons):
    assert len(comparisons) >= MIN_MODULES, len(comparisons)
    variants = {c.module.variant for c in comparisons}
    assert {"original", "rewritten", "f64", "f64-rewritten"} <= variants, variants
    assert {c.module.source for c in comparisons} == {"tensorflow", "jax"}


def test_issue_27_target(comparisons):
    print("\n" + _summary(comparisons))
    within = sum(c.within for c in comparisons)
    bar = max(MIN_WITHIN, math.ceil(TARGET_WITHIN * len(comparisons)))
    assert within >= bar and not any(c.too_low for c in comparisons), _summary(comparisons)


def test_over_prediction_is_bounded(comparisons):
    assert_bounded(comparisons, MAX_RATIO, OVER_PREDICTED, _summary)


def test_prediction_takes_milliseconds(comparisons):
    slow = [(round(c.predict_seconds, 1), c.module.label) for c in comparisons
            if c.predict_seconds > MAX_PREDICT_SECONDS]
    assert not slow, slow


def test_prediction_is_fast(comparisons):
    # The point of a model: microseconds to milliseconds against an XLA compile.
    model = sum(c.predict_seconds for c in comparisons)
    xla = sum(c.xla_seconds for c in comparisons)
    assert model < xla / 20, (model, xla)
