"""The memory model on loops that end with a remainder (a one-trip loop for
the last, shorter slice): XLA inlines that trip, reads what the main loop
left unchanged from the main loop's input, and runs the trip's first work
before the main loop, holding its slices across it
(cc/analysis/loop_forwarding.h).

GPflow SGPR, N = 5,003 (a prime: every split leaves a remainder), M = 200,
loss and gradients (f64), rewritten at four thresholds and compared with
XLA's buffer assignment. Without the forwarding the model was 0.76-0.82x
of XLA's figure on these modules, low enough to break a limit; issue 27's
target is within 10% and never more than 10% below.
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


@pytest.fixture(scope="module")
def sgpr_text() -> str:
    import gpflow
    import numpy as np

    import exla

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(N, 3))
    y = np.sin(3.0 * x.sum(axis=1, keepdims=True)) + 0.1 * rng.normal(size=(N, 1))
    model = gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(lengthscales=[0.5] * 3),
                               inducing_variable=x[:M].copy(), noise_variance=0.01)

    def loss_and_gradients():
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return [loss] + list(tape.gradient(loss, model.trainable_variables))

    return exla.explain(loss_and_gradients).hlo_before


@pytest.mark.parametrize("parts", [2, 3, 5, 7])
def test_a_plan_with_remainder_loops_is_predicted_within_ten_percent(sgpr_text, parts):
    import exla
    from exla.bridge import xla as bridge

    logger = logging.getLogger("exla")
    level = logger.level
    logger.setLevel(logging.ERROR)  # a threshold alone may leave small values whole
    try:
        rewritten, report = exla.optimize_hlo(sgpr_text, threshold=KUF_BYTES // parts + 1,
                                              strict=False)
    finally:
        logger.setLevel(level)
    assert report.split_loops and all(loop.remainder for loop in report.split_loops), \
        [loop.description for loop in report.split_loops]
    stats = bridge.planned_memory(rewritten)
    xla = (stats.temp_bytes + stats.argument_bytes + stats.output_bytes - stats.alias_bytes
           + stats.constant_bytes)
    ratio = exla.predict_peak(rewritten) / xla
    assert 0.9 <= ratio <= 1.1, f"predicted {ratio:.3f}x XLA's {xla} bytes"
