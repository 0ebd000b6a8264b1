"""Large top-ks through exla's topk-prefilter: the same values and indices, bit for bit.

Rows of 262,144 floats (k = 5, blocks of 32) where the order of the top
elements depends on every rule XLA's top-k has: heavy ties (integers as
floats: the lower index first), equal values in blocks whose maxima differ
(the chosen blocks must be read in row order), negative rows with zeros of
both signs (+0 ranks above -0), NaNs of both signs and infinities (total order). Each
program runs through exla (strict, and checked to have run exla's rewrite,
with the prefilter in it) and unchanged; values are compared as bits.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

require("jax", module_level=True)
import jax

from jax import lax  # noqa: E402

import exla  # noqa: E402
from tests.python._what_ran import jax_rewrites, tf_runs  # noqa: E402

pytestmark = pytest.mark.usefixtures("extension")

K = 5
# The 4 MB input whole: one top-k of rows of 262,144.
WHOLE = {"threshold": "8MB"}
# Above the threshold, TensorFlow's sort becomes a top-k (sort_as_topk), and
# the splitter's loop takes the rows in two chunks of 131,072: the
# prefilter runs on each chunk's top-k inside the loop.
CHUNKED = {"threshold": "2MB", "split_size": "2MB"}


def _rows() -> np.ndarray:
    rng = np.random.default_rng(11)
    n = 262_144
    ties = rng.integers(0, 50, size=n).astype(np.float32)
    planted = rng.integers(0, 20, size=n).astype(np.float32)
    # 55 at 1,000 and at 100,010: the later one's block also holds the
    # row's maximum (60), so it ranks first among the blocks.
    planted[[100_000, 100_010, 1_000]] = [60, 55, 55]
    # All negative but for a few zeros: the top is +0, then the -0s (total
    # order), found only if each block's maximum is taken in that order.
    zeros = -rng.integers(1, 50, size=n).astype(np.float32)
    zeros[[70_000, 90_001, 250_000]] = -0.0
    zeros[120_000] = 0.0
    zeros[::997] = -np.nan  # ranks last; must not make its block's maximum
    special = rng.integers(0, 3, size=n).astype(np.float32)
    special[5::10_007] = np.nan
    special[6::9_001] = -np.nan
    special[9::7_919] = np.inf
    special[10::5_003] = -np.inf
    return np.stack([ties, planted, zeros, special])


def _jax_top_k(x):
    # Doubled (exact for all of them): a top-k of the parameter itself
    # would leave no program for exla to rewrite.
    return lax.top_k(x * 2.0, K)


def _tf_top_k(x):
    import tensorflow as tf

    return tf.math.top_k(x * 2.0, k=K)


def _assert_identical_bits(ours, plain):
    values, indices = (np.asarray(a) for a in ours)
    plain_values, plain_indices = (np.asarray(a) for a in plain)
    assert values.dtype == plain_values.dtype == np.float32
    np.testing.assert_array_equal(values.view(np.int32), plain_values.view(np.int32))
    np.testing.assert_array_equal(indices, plain_indices)


def _prefiltered(report) -> bool:
    return "prefiltered" in report.hlo_after  # the pass's top-ks' name


@pytest.mark.parametrize("settings", [WHOLE, CHUNKED], ids=["whole", "chunked"])
def test_jax_matches_the_unrewritten_program(settings):
    x = _rows()
    with jax_rewrites() as rewritten:
        ours = exla.jit(_jax_top_k, strict=True, **settings)(x)
    assert len(rewritten) == 1, "exla's executable did not run"
    _assert_identical_bits(ours, jax.jit(_jax_top_k)(x))
    # The planted row: 60, then the two 55s, the lower index first.
    assert np.asarray(ours[1])[1, :3].tolist() == [100_000, 1_000, 100_010]
    assert _prefiltered(exla.explain(exla.jit(_jax_top_k, strict=True, **settings), x))


def test_tensorflow_matches_the_unrewritten_program():
    require("tensorflow")
    import tensorflow as tf

    x = _rows()
    f = exla.function(_tf_top_k, strict=True, **CHUNKED)
    ours = f(x)
    assert tf_runs(f) and min(tf_runs(f)) >= 1, "exla's program did not run"
    _assert_identical_bits(ours, tf.function(_tf_top_k, jit_compile=True)(x))
    assert _prefiltered(exla.explain(f, x))
