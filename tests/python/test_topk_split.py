"""kNN through exla: top-k and arg-min split along the points, merged per chunk.

Each program runs through exla (strict, and checked to have run exla's
rewrite: identical indices are also what a silent fallback would give) and
unchanged, at sizes where the distances are far above the limit. The
indices must be the unchanged program's exactly, ties included (duplicated
points); the distances also match a float64 reference; XLA's buffer
assignment of the rewritten program is below the limit; and exla's report
says the loop runs over the points, whose chunks are merged.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

require("tensorflow", module_level=True)
import tensorflow as tf
require("jax", module_level=True)
import jax

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from exla.bridge.jax import enable_x64  # noqa: E402

import exla  # noqa: E402
from tests.python._what_ran import jax_rewrites  # noqa: E402

pytestmark = pytest.mark.usefixtures("extension")

# One query's differences (40,000 x 3 floats, 480 KB) are above the limit:
# blocks of queries alone cannot meet it, the points must carry a loop.
QUERIES, POINTS, K = 3, 40_000, 7
THRESHOLD = "300KB"


def _inputs(dtype=np.float32):
    rng = np.random.default_rng(7)
    q = rng.random((QUERIES, 3)).astype(dtype)
    p = rng.random((POINTS, 3)).astype(dtype)
    # Ties: points repeated in other chunks, and queries sitting on points
    # (a zero distance, whose negation is -0.0).
    p[30_000:30_050] = p[10:60]
    p[-10:] = p[0]
    q[:2] = p[:2]
    return q, p


def _tf_knn(q, p):
    d = tf.reduce_sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
    values, indices = tf.math.top_k(-d, k=K)
    return -values, indices


def _tf_nearest(q, p):
    d = tf.reduce_sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
    return tf.math.argmin(d, axis=1), tf.math.argmax(d, axis=1)


def _jax_knn(q, p):
    d = jnp.sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
    values, indices = lax.top_k(-d, K)
    return -values, indices


def _jax_nearest(q, p):
    d = jnp.sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
    return jnp.argmin(d, axis=1), jnp.argmax(d, axis=1)


def _reference_distances(q, p, indices):
    """Float64 distances of the chosen points, and the float64 k smallest."""
    q64, p64 = q.astype(np.float64), p.astype(np.float64)
    d = ((q64[:, None, :] - p64[None, :, :]) ** 2).sum(-1)
    return np.take_along_axis(d, np.asarray(indices, np.int64), 1), np.sort(d, 1)[:, :K]


def _split_over_points(report) -> bool:
    loops = [(loop.where, loop.dimension, loop.extent) for loop in report.split_loops]
    return any(extent == POINTS for *_, extent in loops), loops


def _assert_identical(ours, plain):
    for a, b in zip(ours, plain):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def _check_memory(report, program):
    limit = exla.parse_size(THRESHOLD)
    assert report.planned_temp_bytes_before > limit
    assert report.planned_temp_bytes_after < limit
    split, notes = _split_over_points(report)
    assert split, notes
    if program in (_tf_knn, _jax_knn):  # candidates merged by (value, index)
        assert "topk_merge_order" in report.hlo_after


@pytest.mark.parametrize("program", [_tf_knn, _tf_nearest], ids=["top_k", "argmin_argmax"])
def test_tensorflow_matches_the_unrewritten_program(program):
    q, p = _inputs()
    f = exla.function(program, threshold=THRESHOLD, strict=True)
    ours = f(q, p)
    (info,) = f.programs
    assert info.rewritten and info.runs >= 1, "exla's program did not run"
    _assert_identical(ours, tf.function(program, jit_compile=True)(q, p))
    _check_memory(exla.explain(f, q, p), program)
    if program is _tf_knn:
        chosen, best = _reference_distances(q, p, ours[1])
        np.testing.assert_allclose(ours[0], chosen, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(chosen, best, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("program", [_jax_knn, _jax_nearest], ids=["top_k", "argmin_argmax"])
def test_jax_matches_the_unrewritten_program(program):
    q, p = _inputs()
    report = exla.explain(exla.jit(program, threshold=THRESHOLD, strict=True), q, p)
    _check_memory(report, program)
    with jax_rewrites() as rewritten:
        ours = exla.jit(program, threshold=THRESHOLD, strict=True)(q, p)
    assert len(rewritten) == 1, "exla's executable did not run"
    _assert_identical(ours, jax.jit(program)(q, p))
    if program is _jax_knn:
        chosen, best = _reference_distances(q, p, ours[1])
        np.testing.assert_allclose(ours[0], chosen, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(chosen, best, rtol=1e-5, atol=1e-6)


def test_jax_float64_matches_the_unrewritten_program():
    with enable_x64():
        q, p = _inputs(np.float64)
        with jax_rewrites() as rewritten:
            ours = exla.jit(_jax_knn, threshold=THRESHOLD, strict=True)(q, p)
        assert len(rewritten) == 1, "exla's executable did not run"
        _assert_identical(ours, jax.jit(_jax_knn)(q, p))


def test_special_values_pick_the_same_indices():
    """NaNs of both signs, infinities and signed zeros, ordered as XLA's top-k orders them."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=(2, 200_000)).astype(np.float32)  # 800 KB rows
    x[:, ::7] = -0.0
    x[:, 5::101] = np.nan
    x[:, 6::103] = -np.nan
    x[:, 9::97] = np.inf
    x[:, 10::89] = -np.inf

    # Doubled (exact for all of them): JAX drops x * 1.0 while tracing, and a
    # top-k of the parameter itself creates no tensor to split.
    def largest(x):
        return lax.top_k(x * 2.0, K)

    with jax_rewrites() as rewritten:
        ours = exla.jit(largest, threshold="200KB", strict=True)(x)
    assert len(rewritten) == 1, "exla's executable did not run"
    _assert_identical(ours, jax.jit(largest)(x))
    f = exla.function(lambda x: tf.math.top_k(x * 2.0, k=K), threshold="200KB", strict=True)
    _assert_identical(f(x), tf.function(lambda x: tf.math.top_k(x * 2.0, k=K),
                                         jit_compile=True)(x))
    assert f.programs[0].runs >= 1
