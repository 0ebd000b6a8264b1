"""exla's memory model on modules it was never tuned to (issue 43, item 3).

The held-out set (`experiments/corpus/heldout.py`: programs drawn by the
fuzzer's generator with fixed seeds and six framework programs outside the
corpus, each before and after exla's rewrite) is read from stored HLO files,
predicted with ``exla.predict_peak`` and compiled by XLA CPU for its planned
peak with constants, as `test_memory_model.py` does on the corpus. Its
figures are reported apart from the corpus's.

The corpus target (at least 90% within 10%, none more than 10% below) is
met on draw 10, which nobody studied (73 of 78 within, none below), and on
the draws sessions have studied but 4 and 6 (two modules below and one). The bars below are not the target: they are the distribution
measured when each draw was written (jaxlib 0.7.1), less a stated margin,
so that a change of the model that makes held-out programs worse fails.
Reach the target by fixing the model on the corpus, never by tuning to
these.
"""

from __future__ import annotations

import pytest

from experiments.corpus import heldout, memory_corpus
from tests.analysis._over_prediction import assert_bounded
from tests._extension import load_extension

load_extension()

TARGET_WITHIN = 0.90
"""The corpus's target (issue 27): every draw reaches its share within 10%,
and every draw but 4 and 6 its none below, draw 10 (not studied)
included."""

# Measured 2026-11-29 on jaxlib 0.7.1, after the model learnt, each from
# XLA's sources and checked on small modules against XLA's buffer
# assignment (never tuned to these): a reshaped loop result that cannot
# take its operand's buffer, unfused long minor-dimension concatenations,
# XLA's split of a reduce of a concatenation and of a sum of a negation, no
# expensive producer in a loop that widens it, an expensive producer fused
# once its readers share one loop, and then XLA's copy of a cheap producer
# into each reader that can compute it (reader_duplication.h), a pad folded
# into the reduce-window that reads it, a convolution operand computed into
# its layout copy, and a tree reduction's step of its own; then the loop
# state XLA's while loop simplifier drops as dead (dead_loop_elements.h), a
# top-k without a kernel whose values alone are read sorted in place
# (topk_decomposition.h), a loop started in place from a broadcast its
# other readers compute again (reader_duplication.h), and a literal a loop
# only carries read as that literal (loop_constant_sinking.h). 88 modules,
# 82 (93%) within 10%, 2 more than 10% below, the lowest 0.692x
# (fuzz_43000000024, rewritten), the highest 1.877x; then, from draw 2's
# study (below), 83 within and the highest 1.232x: fuzz_43000000033, at
# 1.88x the one exception to MAX_RATIO, is within 1%. Before the last
# four: 77 within, 3 below (fuzz_43000000018 at 1.46x and 1.27x,
# fuzz_43000000021 at 1.10x, fuzz_43000000030 at 1.25x, now each within
# 1%; fuzz_43000000002 rewritten 0.899x, now 1.02x); before the four
# before those: 74 within, 5 below, the lowest 0.577x (fuzz_43000000036,
# now 1.02x); before all: 66 within, 9 below. The bars leave one module of
# room on each count and about 5% on the lowest ratio: the modules are
# stored and XLA's plan of a text is deterministic, so only a change of the
# model (or of jaxlib) moves them. Then, from draws 2 and 3's study
# (below): 85 within, 1 below (gpflow_sgpr_matern52's original, 0.8999x,
# now 0.9001x: a concatenation two fused readers share is written out),
# the highest 1.164x (fuzz_43000000026's rewritten module, 1.23x, came
# within: a broadcast that moves no element is a reshape).
# Then, from the study of draw 5: 86 within, none below (fuzz_43000000024
# rewritten 0.692x -> 1.011x: a tree reduction reads a row-major copy of an
# input that XLA's ReshapeMover sinks a transpose onto; gpflow_sgpr_matern52
# 0.900x -> 0.967x: a producer whose copies would read more is written
# once), the highest 1.207x (gpflow_sgpr_matern52, rewritten).
MEASURED = {"modules": 88, "within": 86, "too_low": 0, "lowest": 0.967, "highest": 1.181}
MIN_WITHIN = MEASURED["within"] - 1
MAX_TOO_LOW = MEASURED["too_low"] + 1
MIN_RATIO = 0.65
MAX_RATIO = 1.5
"""No module predicted more than this much above XLA, but those in OVER_PREDICTED."""

OVER_PREDICTED: dict[str, tuple[float, str]] = {}
"""Programs allowed above MAX_RATIO: (their own bound, why)."""


@pytest.fixture(scope="module")
def comparisons() -> list[memory_corpus.Comparison]:
    return [memory_corpus.compare(m) for m in heldout.modules(draw=1)]


def _summary(comparisons, name: str = "held-out, draw 1") -> str:
    n = len(comparisons)
    within = sum(c.within for c in comparisons)
    lines = [f"{name}: {n} modules, {within} ({within / n:.0%}) within "
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
    assert MIN_RATIO <= min(c.ratio for c in comparisons), _summary(comparisons)


def test_heldout_over_prediction_is_bounded(comparisons):
    assert_bounded(comparisons, MAX_RATIO, OVER_PREDICTED, _summary)


# Draw 2: 40 fuzzer programs of new seeds (43,000,000,040 on), drawn
# 2026-11-29 after sessions had studied draw 1's worst modules. Measured
# when drawn, on the model of that day (before the rules of stop 49): 79
# modules, 61 (77%) within, 2 below (lowest 0.530x), the highest 1.938x, 7
# above MAX_RATIO. Studied from now on (it no longer says how the model does
# on programs nobody looked at): a helper session (draw2) took its worst
# modules to XLA's buffer assignment and its sources and taught the model
# two rules, each checked on a small module against XLA: a chain of loops
# outlined for threads that ends in the entry's result shares the result's
# allocation (in_place.h; fuzz_43000000068 1.94x -> 1.00x), and a loop
# reads an operand it reaches on several paths once when XLA decides
# whether to outline it (fused_module.cc; fuzz_43000000076 1.77x -> 1.00x,
# rewritten 1.52x -> 1.09x).
# After that study (stop 49): 79 modules, 66 (84%) within, 2 below
# (lowest 0.530x, fuzz_43000000049), the highest 1.714x
# (fuzz_43000000077), 4 above MAX_RATIO. Neither the target nor the 1.5x bound is met here. The bars
# are the distribution measured with the model as committed beside them,
# less draw 1's margins (one module on each count, about 5% on each
# extreme); the fuzzer's programs are small, so one module is 1.3% of the
# draw.
#
# Draw 3: 40 fuzzer programs of new seeds (43,000,000,080 on; 76 distinct
# modules), drawn 2026-11-29 after draw 2's study and not studied: the
# figure for programs nobody looked at. On the model before this session's
# rules (stop 48): 62 (82%) within, 4 below, the lowest 0.544x, the highest
# 1.956x; with them: 65 (86%) within, 3 below (lowest 0.544x,
# fuzz_43000000099), the highest 1.956x (fuzz_43000000103), 2 above
# MAX_RATIO. Neither the target nor the bound is met here either.
#
# Then draws 2 and 3 were studied (five helper sessions, 2026-11-29, each
# rule read in XLA's sources and checked on a small module against its
# buffer assignment): XLA's algebraic simplifier makes a broadcast or a
# reduce that moves no element a reshape (reshape_equivalents.h), the
# transpose of a product the product of its operands swapped
# (transpose_of_dot.h), two transposes one or none
# (transpose_of_transpose.h), and drops a sort along one element
# (sort_of_one.h); fusion writes out a concatenation, pad or reduction that
# a loop would emit twice or two instructions read (fusion_duplication.h),
# and copies a cheap producer into loops through the reshapes that view it
# (reader_duplication.h); a loop writes over an operand only where every
# read of it is elementwise, and never over a loop outlined for threads
# unless into the entry's result (in_place.h). Draw 2: 73 (92%) within,
# none below (fuzz_43000000049 0.530x -> 1.000x, fuzz_43000000063 0.866x
# -> 1.000x), the lowest 0.923x. Draw 3: 69 (91%) within, 2 below (both
# fuzz_43000000099), the highest 1.835x (fuzz_43000000106, rewritten:
# 1.000x with the transpose rule alone; the reshape rule then moves its
# loop state to a value of its own, not followed).
#
# Draw 4: 40 fuzzer programs of new seeds (43,000,000,120 on; 77 distinct
# modules), drawn after that study and not studied: the figure for
# programs nobody looked at. With the model before the study (stop 49):
# 62 (81%) within, 4 below, the lowest 0.539x, the highest 1.952x; with
# it: 67 (87%) within, 3 below (lowest 0.564x, fuzz_43000000138), the
# highest 1.818x (fuzz_43000000150). Neither the target nor the bound is
# met on programs nobody studied.
#
# Then draw 4 was studied (with the triangular solve, found low on small
# modules): a value seen through a reshape is written in place as a loop's
# state (aliasing.cc; fuzz_43000000106 and _150 rewritten come within),
# transposes merged before one is folded into a product (_152), a loop's
# state computed transposed copied into the loop's layout
# (loop_state_layout.h; _144 rewritten, 0.583x, comes within), a
# triangular solve's padded 128-row blocks (triangular_solve.h). Draw 3:
# 70 within, the highest 1.219x; draw 4: 71 (92%) within, 2 below (both
# fuzz_43000000138, 0.564x: views that take no step in XLA's schedule,
# not modelled), the highest 1.423x.
#
# Draw 5: 40 fuzzer programs of new seeds (43,000,000,160 on; 77 distinct
# modules), drawn after that study and not studied: 70 (90.9%) within,
# 5 below (the lowest 0.531x, fuzz_43000000168), the highest 1.936x
# (fuzz_43000000192). The share is met on programs nobody studied; the
# bound (none below) is not.
#
# Then draw 5 was studied (2026-11-29, stop 52): a vector or scalar reduce
# of a transpose is a reduce of its operand (reduce_of_transpose.h), a sum
# read through a transpose with two readers is written out, a tree
# reduction reads a row-major copy of an input a transpose is sunk onto
# (tree_reduction.h), an outer product is copied into the readers that can
# compute it (reader_duplication.h), a producer whose copies would read
# more is written once where a value on the way to a reader is written out
# (globally_unfusible.h), XLA's loop-invariant code motion
# (loop_invariant_code_motion.h), a dynamic slice at literal offsets is a
# slice, and a Cholesky of more than 128 columns is held block by block
# (cholesky.h). Draw 5: 77 (100%) within, none below; draw 2: 74 within.
#
# Draw 6: 40 fuzzer programs of new seeds (43,000,000,200 on; 77 distinct
# modules), drawn after that study and not studied: 67 (87%) within, 5
# below (the lowest 0.725x, fuzz_43000000231 rewritten), the highest
# 3.502x (fuzz_43000000223 rewritten). On programs nobody studied, neither
# the share nor the bound is met this time.
#
# Then draw 6 was studied (2026-11-29, stop 53): a reduce of a reshape
# reads the reshape's operand (reduce_of_reshape.h), a transpose is copied
# into the loops that can compute it (reader_duplication.h), a result does
# not write over a state a loop passes through (in_place.h), a
# matrix-vector product is output-fused into the add that reads it
# (output_fusion.h), a reshape of a reshape is merged, XLA's schedule starts
# from the parameters, then the literals, a regular literal is an iota or a
# broadcast, an unblocked Cholesky builds a lower factor in its result, and
# a matrix-vector product fuses its transposed matrix. Draw 6: 73 (94.8%)
# within, 2 below (fuzz_43000000231 rewritten 0.725x: XLA writes a
# concatenation twice where a fusion refuses it for code duplication;
# fuzz_43000000237 original 0.878x: a transposed entry result copied from
# a temporary), the highest 1.168x.
#
# Draw 7: 40 fuzzer programs of new seeds (43,000,000,240 on; 75 distinct
# modules), drawn after that study and not studied: 67 (89.3%) within, 2
# below (fuzz_43000000241, original 0.681x and rewritten 0.792x), the
# highest 1.465x (fuzz_43000000259 original). On programs nobody studied,
# the share is one module short of 90% and the bound is not met.
#
# Then draw 7's two modules below were studied (stop 53): a transposed
# entry result is computed into a temporary in the transposed layout and
# copied into the row-major result (expand/result_layout_copy.h), which
# also brings draw 6's fuzz_43000000237 original within. Draw 7: 69
# (92.0%) within, none below; draw 6: 74 within, 1 below.
#
# Draw 8: 40 fuzzer programs of new seeds (43,000,000,280 on; 78 distinct
# modules), drawn after that study and not studied: 73 (93.6%) within, 2
# below (fuzz_43000000306 rewritten 0.829x, fuzz_43000000301 original
# 0.835x), the highest 1.565x (fuzz_43000000281 rewritten). On programs
# nobody studied, the share is met; the bound (none below) is not.
#
# Then draw 8's two modules below were studied (stop 54): a read through a
# reshape keeps a loop off the buffer under the reshape (in_place.h), and
# only an outlined result loop takes an outlined loop's buffer, the
# outlined loop seen through a conversion and its copied producers'
# arithmetic counted (in_place.h, fused_module.cc). Draw 8: 75 (96.2%)
# within, none below.
#
# Draw 9: 40 fuzzer programs of new seeds (43,000,000,320 on; 77 distinct
# modules), drawn after that study and not studied: 72 (93.5%) within, 1
# below (fuzz_43000000347 original, 0.689x: XLA outlines a row sum for its
# reducer's arithmetic, so a top-k's sort cannot take its buffer), the
# highest 1.495x. Then studied: a reduction's additions count toward
# outlining its loop (fused_module.cc), and an expensive value under a
# cheap one XLA copies into a reader is written once. Draw 9: 73 within,
# none below.
#
# Draw 10: 40 fuzzer programs of new seeds (43,000,000,360 on; 78 distinct
# modules), drawn after that study and not studied: 73 (93.6%) within, none
# below (the lowest 0.932x, fuzz_43000000364 rewritten), the highest 1.937x
# (fuzz_43000000376 original: a TensorFlow Mean of a transposed
# concatenation through a cast to its own type, which XLA splits; a fold of
# that cast was tried and not kept, see reduce_of_transpose_test.cc). On
# programs nobody studied, the target is met: the share and the bound.
#
# Then (stop 54) the expensive value under a copied loop was found through
# the values it is fused into, which brings draw 3's two modules below
# (fuzz_43000000099, 0.544x and 0.737x) within: draw 3, 72 within, none
# below.
LATER_DRAWS = {
    2: {"modules": 79, "within": 74, "too_low": 0, "lowest": 0.923, "highest": 1.714},
    3: {"modules": 76, "within": 72, "too_low": 0, "lowest": 0.925, "highest": 1.219},
    4: {"modules": 77, "within": 72, "too_low": 2, "lowest": 0.564, "highest": 1.423},
    5: {"modules": 77, "within": 77, "too_low": 0, "lowest": 0.984, "highest": 1.057},
    6: {"modules": 77, "within": 74, "too_low": 1, "lowest": 0.725, "highest": 1.168},
    7: {"modules": 75, "within": 69, "too_low": 0, "lowest": 0.919, "highest": 1.465},
    8: {"modules": 78, "within": 75, "too_low": 0, "lowest": 0.938, "highest": 1.565},
    9: {"modules": 77, "within": 73, "too_low": 0, "lowest": 0.965, "highest": 1.495},
    10: {"modules": 78, "within": 73, "too_low": 0, "lowest": 0.932, "highest": 1.937},
}
"""Each later draw's distribution as measured, which its bars follow."""


@pytest.fixture(scope="module", params=sorted(LATER_DRAWS), ids=lambda d: f"draw{d}")
def later_draw(request) -> tuple[int, list[memory_corpus.Comparison]]:
    return request.param, [memory_corpus.compare(m) for m in heldout.modules(draw=request.param)]


def test_every_draw_is_measured():
    assert heldout.draws() == [1, *sorted(LATER_DRAWS)]


def test_later_draw_is_stored_whole(later_draw):
    draw, comparisons = later_draw
    assert len(comparisons) == LATER_DRAWS[draw]["modules"]
    assert all(c.module.program.startswith("fuzz_") for c in comparisons)
    assert {c.module.variant for c in comparisons} == {"original", "rewritten"}


def test_later_draw_distribution(later_draw):
    draw, comparisons = later_draw
    measured = LATER_DRAWS[draw]
    summary = _summary(comparisons, f"held-out, draw {draw}")
    print("\n" + summary)
    assert sum(c.within for c in comparisons) >= measured["within"] - 1, summary
    assert sum(c.too_low for c in comparisons) <= measured["too_low"] + 1, summary
    assert min(c.ratio for c in comparisons) >= 0.95 * measured["lowest"], summary
    assert max(c.ratio for c in comparisons) <= 1.05 * measured["highest"], summary
