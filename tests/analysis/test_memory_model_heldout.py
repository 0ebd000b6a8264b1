"""exla's memory model on modules it was never tuned to (issue 43, item 3).

The held-out set (`experiments/corpus/heldout.py`: programs drawn by the
fuzzer's generator with fixed seeds and six framework programs outside the
corpus, each before and after exla's rewrite) is read from stored HLO files,
predicted with ``exla.predict_peak`` and compiled by XLA CPU for its planned
peak with constants, as `test_memory_model.py` does on the corpus. Its
figures are reported apart from the corpus's.

The corpus target (at least 90% within 10%, none more than 10% below) is
not met here, and the bars below are not it: they are the distribution
measured when the set was written (jaxlib 0.7.1), less a stated margin, so
that a change of the model that makes held-out programs worse fails. Reach
the target by fixing the model on the corpus, never by tuning to these.
"""

from __future__ import annotations

import pytest

from experiments.corpus import heldout, memory_corpus
from tests._extension import load_extension

load_extension()

TARGET_WITHIN = 0.90
"""The corpus's target (issue 27), which the held-out set does not reach yet."""

# Measured 2026-11-28 on jaxlib 0.7.1, after the model learnt two rewrites of
# XLA's algebraic simplifier (a reduce of a reduce folded into one, a
# division by a literal made a product): 88 modules, 66 (75%) within 10%, 9
# more than 10% below, the lowest 0.577x (fuzz_43000000036, both variants:
# XLA computes a cheap product again inside the loop that reads it beside a
# tree reduction's stored copy, which keeps its operand alive; the model
# reads the copy), the highest 1.891x. Before: 63 within, 11 below, the
# lowest 0.263x. The bars leave two modules of room on each count and about
# 5% on each extreme: the modules are stored and XLA's plan of a text is
# deterministic, so only a change of the model (or of jaxlib) moves them.
MEASURED = {"modules": 88, "within": 66, "too_low": 9, "lowest": 0.577, "highest": 1.891}
MIN_WITHIN = MEASURED["within"] - 2
MAX_TOO_LOW = MEASURED["too_low"] + 2
MIN_RATIO = 0.55
MAX_RATIO = 2.0


@pytest.fixture(scope="module")
def comparisons() -> list[memory_corpus.Comparison]:
    return [memory_corpus.compare(m) for m in heldout.modules()]


def _summary(comparisons) -> str:
    n = len(comparisons)
    within = sum(c.within for c in comparisons)
    lines = [f"held-out: {n} modules, {within} ({within / n:.0%}) within "
             f"{memory_corpus.TOLERANCE:.0%} (target {TARGET_WITHIN:.0%}), "
             f"{sum(c.too_low for c in comparisons)} more than "
             f"{memory_corpus.TOLERANCE:.0%} below"]
    lines += [f"  {c.ratio:6.3f}  {c.module.label}: predicted {c.predicted}, XLA {c.xla}"
              for c in sorted(comparisons, key=lambda c: c.ratio) if not c.within]
    return "\n".join(lines)


def test_set_is_stored_whole(comparisons):
    assert len(comparisons) == MEASURED["modules"]
    assert {c.module.variant for c in comparisons} == {"original", "rewritten"}
    assert {c.module.source for c in comparisons} == {"tensorflow", "jax"}


def test_heldout_distribution(comparisons):
    print("\n" + _summary(comparisons))
    assert sum(c.within for c in comparisons) >= MIN_WITHIN, _summary(comparisons)
    assert sum(c.too_low for c in comparisons) <= MAX_TOO_LOW, _summary(comparisons)
    ratios = [c.ratio for c in comparisons]
    assert MIN_RATIO <= min(ratios) and max(ratios) <= MAX_RATIO, _summary(comparisons)
