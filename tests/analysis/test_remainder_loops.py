"""Loops that end a split with a remainder (a one-trip loop for the slice
that does not fill a chunk), against XLA's buffer assignment.

XLA inlines a one-trip loop, reads what a loop leaves unchanged from the
loop's input (cc/model/simplify/loop_forwarding.h), and runs work that is ready
first. A remainder trip after the main loop therefore ran its first work
before the main loop and held its slices across it: the splitter now runs
the remainder first (cc/passes/tensor_splitter/loops.cc).

GPflow SGPR loss and gradients (f64), M = 200, N = 5,003 (a prime: every
split leaves a remainder) against N = 5,000. With the remainder last, the
model predicted 0.76-0.82x of XLA's figure before it forwarded unchanged
loop elements, and XLA planned 23-30% more than for N = 5,000 with larger
chunks; issue 27's target for the model is within 10% and never more than
10% below.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/

from tests._extension import load_extension  # noqa: E402

load_extension()

N, M = 5_003, 200
KUF_BYTES = N * M * 8


def _sgpr_text(n: int) -> str:
    import gpflow
    import numpy as np

    import exla

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, 3))
    y = np.sin(3.0 * x.sum(axis=1, keepdims=True)) + 0.1 * rng.normal(size=(n, 1))
    model = gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(lengthscales=[0.5] * 3),
                               inducing_variable=x[:M].copy(), noise_variance=0.01)

    def loss_and_gradients():
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return [loss] + list(tape.gradient(loss, model.trainable_variables))

    return exla.explain(loss_and_gradients).hlo_before


@pytest.fixture(scope="module")
def sgpr_text() -> str:
    return _sgpr_text(N)


def _rewrite(text: str, threshold: int):
    """The pipeline's module at `threshold`, its report, and XLA's planned peak."""
    import exla
    from exla.bridge import xla as bridge

    logger = logging.getLogger("exla")
    level = logger.level
    logger.setLevel(logging.ERROR)  # a threshold alone may leave small values whole
    try:
        rewritten, report = exla.optimize_hlo(text, threshold=threshold, strict=False)
    finally:
        logger.setLevel(level)
    stats = bridge.planned_memory(rewritten)
    xla = (stats.temp_bytes + stats.argument_bytes + stats.output_bytes - stats.alias_bytes
           + stats.constant_bytes)
    return rewritten, report, xla


@pytest.mark.parametrize("parts", [2, 3, 5, 7])
def test_a_plan_with_remainder_loops_is_predicted_within_ten_percent(sgpr_text, parts):
    import exla

    rewritten, report, xla = _rewrite(sgpr_text, KUF_BYTES // parts + 1)
    assert report.split_loops and all(loop.remainder for loop in report.split_loops), \
        [loop.description for loop in report.split_loops]
    ratio = exla.predict_peak(rewritten) / xla
    assert 0.9 <= ratio <= 1.1, f"predicted {ratio:.3f}x XLA's {xla} bytes"


@pytest.mark.parametrize("threshold", [4_000_000, 1_600_000])
def test_a_remainder_costs_no_more_memory_than_a_split_without_one(sgpr_text, threshold):
    """N = 5,003 in chunks no larger than N = 5,000's: XLA plans no more for it
    (with the remainder last it planned 9.1-13.9 MB against 7.5-10.7 MB)."""
    _, with_remainder, peak = _rewrite(sgpr_text, threshold)
    _, without, peak_without = _rewrite(_sgpr_text(5_000), threshold)
    assert all(loop.remainder for loop in with_remainder.split_loops)
    assert not any(loop.remainder for loop in without.split_loops)
    assert max(loop.chunk for loop in with_remainder.split_loops) <= \
        min(loop.chunk for loop in without.split_loops)
    assert peak <= peak_without, (peak, peak_without)
