"""exla's memory model (``exla.predict_peak``) against XLA's own buffer assignment.

On every module of `experiments/corpus/memory_corpus.py` (the corpus programs as
lowered, rewritten by exla's pipeline at the forced threshold, and their f64
variants: TensorFlow, tf_keras, GPflow, TFP, JAX, flax, optax), the model's
predicted peak is compared with XLA's planned peak, constants included
(`exla.bridge.xla.planned_memory`). The target of issue 27: within 10% for at
least 90% of the modules and never more than 10% below. The model meets it
(the modules it still misses, all above XLA, are listed in
experiments/README.md); the distribution last measured is also a bar it may
not fall below.

The XLA figures are computed once per session (one compilation per module).
"""

from __future__ import annotations


import pytest

from experiments.corpus import memory_corpus
from tests._extension import load_extension  # noqa: E402

load_extension()

# The distribution last measured (experiments/results/memory_model.csv,
# breadth-first schedule over the module as XLA inlines calls and loops of
# one trip, folds literals and reads of tuples, drops unread sort arrays
# and merges common subexpressions, the producers XLA's fusion leaves out
# of loops (at most six reductions in one), XLA's copies of loop state,
# rotated loop elements, conditional operands and state a body still reads
# after updating it, the transposed copies dots read, sorts in place, the
# loop state its simplifier drops, the pointer tables it allocates beside
# the heap, the loops, copies and early values of its expansions, the
# literals it keeps and the temporaries it places in the allocations of
# the entry's results: 150 modules, 90% within 10%, none more than 10%
# below, the lowest at 0.91x), with a little room for lowering differences
# between runs (one module below at most).
MIN_MODULES = 60
MIN_WITHIN = 0.88
MAX_TOO_LOW = 0.01


@pytest.fixture(scope="session")
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


def test_distribution_does_not_regress(comparisons):
    print("\n" + _summary(comparisons))
    within = sum(c.within for c in comparisons) / len(comparisons)
    too_low = sum(c.too_low for c in comparisons) / len(comparisons)
    assert within >= MIN_WITHIN, _summary(comparisons)
    assert too_low <= MAX_TOO_LOW, _summary(comparisons)


def test_issue_27_target(comparisons):
    within = sum(c.within for c in comparisons) / len(comparisons)
    assert within >= 0.9 and not any(c.too_low for c in comparisons), _summary(comparisons)


def test_prediction_is_fast(comparisons):
    # The point of a model: microseconds to milliseconds against an XLA compile.
    model = sum(c.predict_seconds for c in comparisons)
    xla = sum(c.xla_seconds for c in comparisons)
    assert model < xla / 20, (model, xla)
