"""Tests of the `algebraic-rewriter` pass on real TensorFlow and JAX programs.

Each positive test lowers a real program, runs the pass and checks
  * that the rewrite happened, by the HLO: the rank-3 (rank-4 with a batch
    dimension) broadcast difference is gone and a new `dot` is there;
  * that results match the original program, both executed through
    TensorFlow's XLA (`call_hlo`): float64 programs to a relative error of
    1e-10 and float32 ones to 1e-4, measured against the largest output
    element (the |x|^2 + |y|^2 - 2 x.y expansion cancels, so its error scales
    with the norms, not with each distance);
  * that XLA's planned temporary memory dropped (the factor is printed; run
    pytest with -s to see it). The feature dimension is 48-64 here: XLA's CPU
    compiler fuses the difference into the reduction only while the reduced
    dimension is small (up to about 32), beyond that it materialises the
    whole n x m x d tensor, which is what the rewrite removes.
Negative tests check that the pass leaves programs alone (text unchanged,
changed=False) when nothing would shrink enough: a feature dimension below 8
(the pass requires the removed tensor to be 8x larger than anything it
keeps), a tensor below the size threshold, an L1 distance (no exact dot
form), a difference that is also used elsewhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pass_tools as tools  # noqa: E402

_exla = tools.load_extension()

PASS = ["algebraic-rewriter"]
F64_RTOL = 1e-10
F32_RTOL = 1e-4


_rng = tools.rng
_tf_function = tools.tf_function


def _assert_distance_rewritten(original, rewritten, big_rank):
    assert tools.max_entry_rank(original) == big_rank
    assert tools.max_entry_rank(rewritten) < big_rank, "big tensor still there"
    assert (tools.count_entry_opcode(rewritten, "dot")
            > tools.count_entry_opcode(original, "dot")), "no new dot"


# --------------------------------------------------------------------------
# kNN: broadcast distances + top_k (TensorFlow, float32)
# --------------------------------------------------------------------------

def _knn():
    import tensorflow as tf

    @_tf_function
    def knn(queries, points):
        d = tf.reduce_sum((queries[:, None, :] - points[None, :, :]) ** 2,
                          axis=-1)
        neg, idx = tf.math.top_k(-d, k=8)
        return -neg, idx

    return knn


def test_knn_distances_become_a_dot():
    rng = _rng(0)
    queries = rng.normal(size=(400, 64)).astype(np.float32)
    points = rng.normal(size=(1000, 64)).astype(np.float32)
    original = tools.tf_hlo(_knn(), queries, points)
    rewritten, changed = tools.run_passes(original, PASS, fast_math=True)
    assert changed
    _assert_distance_rewritten(original, rewritten, big_rank=3)
    assert "maximum(" in rewritten  # clamped at zero

    (d0, i0) = tools.execute(original, [queries, points])
    (d1, i1) = tools.execute(rewritten, [queries, points])
    tools.assert_close(d1, d0, F32_RTOL, "kNN distances")
    # Neighbour indices agree except where two candidates are closer than
    # the rounding error of the expansion.
    mismatch = i0 != i1
    assert mismatch.mean() < 0.01
    np.testing.assert_allclose(d1[mismatch], d0[mismatch],
                               rtol=0, atol=F32_RTOL * np.abs(d0).max())

    assert tools.memory_factor("kNN 400x1000x64 f32", original, rewritten) > 10


# --------------------------------------------------------------------------
# RBF kernel matrix-vector product with lengthscales (TensorFlow, float64)
# --------------------------------------------------------------------------

def _rbf(form):
    import tensorflow as tf

    def matvec(x, y, v, lengthscales):
        if form == "scale-after-subtract":
            diff = (x[:, None, :] - y[None, :, :]) / lengthscales
            d = tf.reduce_sum(diff * diff, axis=-1)
        elif form == "scale-before-broadcast":
            xs, ys = x / lengthscales, y / lengthscales
            d = tf.reduce_sum(tf.square(xs[:, None, :] - ys[None, :, :]), -1)
        else:  # weights after the square, difference in the other order
            d = tf.reduce_sum(
                tf.pow(y[None, :, :] - x[:, None, :], 2) / lengthscales ** 2,
                axis=-1)
        return tf.matmul(tf.exp(-0.5 * d), v)

    return _tf_function(matvec)


@pytest.mark.parametrize("form", ["scale-after-subtract",
                                  "scale-before-broadcast",
                                  "weight-after-square"])
def test_rbf_kernel_matvec_with_lengthscales(form):
    rng = _rng(1)
    d = 48
    x = rng.normal(size=(500, d))
    y = rng.normal(size=(400, d))
    v = rng.normal(size=(400, 2))
    lengthscales = rng.uniform(0.5, 1.5, size=d) * np.sqrt(d)
    args = [x, y, v, lengthscales]
    original = tools.tf_hlo(_rbf(form), *args)
    rewritten, changed = tools.run_passes(original, PASS, fast_math=True)
    assert changed
    _assert_distance_rewritten(original, rewritten, big_rank=3)
    (k0,) = tools.execute(original, args)
    (k1,) = tools.execute(rewritten, args)
    tools.assert_close(k1, k0, F64_RTOL, f"RBF matvec ({form})")
    assert tools.memory_factor(f"RBF matvec {form} 500x400x48 f64",
                               original, rewritten) > 10


# --------------------------------------------------------------------------
# JAX: batched pairwise distances, reduction over the batch-free dims
# --------------------------------------------------------------------------

def test_jax_batched_squared_distances():
    import jax.numpy as jnp

    def distances(x, y):
        # Difference in the other order and jnp.square: JAX's own lowering.
        return jnp.sum(jnp.square(y[:, None, :, :] - x[:, :, None, :]), -1)

    rng = _rng(2)
    x = rng.normal(size=(2, 256, 64)).astype(np.float32)
    y = rng.normal(size=(2, 300, 64)).astype(np.float32)
    original = tools.jax_hlo(distances, x, y)
    rewritten, changed = tools.run_passes(original, PASS, fast_math=True)
    assert changed
    _assert_distance_rewritten(original, rewritten, big_rank=4)
    (d0,) = tools.execute(original, [x, y])
    (d1,) = tools.execute(rewritten, [x, y])
    tools.assert_close(d1, d0, F32_RTOL, "JAX batched distances")
    assert d1.min() >= 0
    assert tools.memory_factor("JAX batched distances 2x256x300x64 f32",
                               original, rewritten) > 10


# --------------------------------------------------------------------------
# reduce_sum(a * b) over broadcasts -> dot
# --------------------------------------------------------------------------

def test_sum_of_broadcast_products_becomes_a_dot():
    import tensorflow as tf

    @_tf_function
    def scores(q, k):
        # Hand-written attention scores.
        return tf.nn.softmax(tf.reduce_sum(q[:, None, :] * k[None, :, :], -1))

    rng = _rng(3)
    q = rng.normal(size=(300, 64)).astype(np.float32)
    k = rng.normal(size=(500, 64)).astype(np.float32)
    original = tools.tf_hlo(scores, q, k)
    rewritten, changed = tools.run_passes(original, PASS)
    assert changed
    _assert_distance_rewritten(original, rewritten, big_rank=3)
    (s0,) = tools.execute(original, [q, k])
    (s1,) = tools.execute(rewritten, [q, k])
    tools.assert_close(s1, s0, F32_RTOL, "attention scores")
    assert tools.memory_factor("sum of products 300x500x64 f32",
                               original, rewritten) > 10


# --------------------------------------------------------------------------
# Left alone
# --------------------------------------------------------------------------

def _distance_program(feature_dim, seed=4):
    import tensorflow as tf

    @_tf_function
    def distances(x, y):
        return tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)

    rng = _rng(seed)
    x = rng.normal(size=(50, feature_dim))
    y = rng.normal(size=(40, feature_dim))
    return tools.tf_hlo(distances, x, y)


def _assert_unchanged(text, **options):
    new_text, changed = tools.run_passes(text, PASS, **options)
    assert not changed
    assert new_text == _exla.round_trip(text)


@pytest.mark.parametrize("feature_dim", [1, 4])
def test_small_feature_dimension_is_left_alone(feature_dim):
    # n x m x d is only d times the n x m result: with d = 1 nothing would
    # shrink; below d = 8 the fused original is as fast and more accurate.
    _assert_unchanged(_distance_program(feature_dim=feature_dim))


def test_tensor_below_threshold_is_left_alone():
    text = _distance_program(feature_dim=8)  # 50*40*8 f64 = 128 KB
    _assert_unchanged(text, threshold=1 << 20, fast_math=True)
    assert tools.run_passes(text, PASS, threshold=64 << 10, fast_math=True)[1]


def test_l1_distance_is_left_alone():
    import tensorflow as tf

    @_tf_function
    def manhattan(x, y):
        return tf.reduce_sum(tf.abs(x[:, None, :] - y[None, :, :]), axis=-1)

    rng = _rng(5)
    _assert_unchanged(tools.tf_hlo(manhattan, rng.normal(size=(50, 8)),
                                   rng.normal(size=(40, 8))))


def test_difference_used_elsewhere_is_left_alone():
    import tensorflow as tf

    @_tf_function
    def both(x, y):
        diff = x[:, None, :] - y[None, :, :]
        return tf.reduce_sum(diff ** 2, -1), tf.reduce_max(diff, -1)

    rng = _rng(6)
    _assert_unchanged(tools.tf_hlo(both, rng.normal(size=(50, 8)),
                                   rng.normal(size=(40, 8))))


def test_registered_first_in_default_pipeline():
    pipeline = list(_exla.default_pipeline())
    assert pipeline[:2] == ["algebraic-rewriter", "dot-order-optimizer"]
    assert pipeline[-1] == "dce"


# --------------------------------------------------------------------------
# Accuracy: every rewrite against a float64 reference, with the original
# program's own error as the yardstick
# --------------------------------------------------------------------------

def _errors(original: str, rewritten: str, args32: list, reference: np.ndarray) -> tuple[float, float]:
    """Normwise errors of the original and rewritten float32 programs against `reference`."""
    scale = np.abs(reference).max()
    (o,) = tools.execute(original, args32)
    (r,) = tools.execute(rewritten, args32)
    return (float(np.abs(o - reference).max() / scale), float(np.abs(r - reference).max() / scale))


def test_distance_is_left_alone_without_fast_math():
    # The default keeps results within the program's own rounding.
    _assert_unchanged(_distance_program(feature_dim=16))


def test_sum_of_products_is_as_accurate_as_the_original():
    import tensorflow as tf

    @_tf_function
    def scores(q, k):
        return tf.reduce_sum(q[:, None, :] * k[None, :, :], -1)

    rng = _rng(7)
    q = rng.normal(size=(300, 64)).astype(np.float32)
    k = rng.normal(size=(500, 64)).astype(np.float32)
    original = tools.tf_hlo(scores, q, k)
    rewritten, changed = tools.run_passes(original, PASS)
    assert changed  # no fast_math needed: a dot only reorders the same sum
    reference = q.astype(np.float64) @ k.astype(np.float64).T
    error_original, error_rewritten = _errors(original, rewritten, [q, k], reference)
    assert error_rewritten <= 4 * max(error_original, np.finfo(np.float32).eps), (
        error_original, error_rewritten)


def test_fast_math_distance_error_is_the_documented_one():
    # Close points, far from the origin: |x|^2 is 1e4 times |x - y|^2, so the
    # expansion loses about four digits (relative error ~ eps |x|^2 /
    # |x - y|^2), which is why it needs fast_math; the direct form keeps the
    # program's rounding.
    import tensorflow as tf

    @_tf_function
    def distances(x, y):
        return tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)

    rng = _rng(8)
    centre = rng.normal(size=(1, 16)) * 10
    x = (centre + rng.normal(size=(200, 16)) * 0.1).astype(np.float32)
    y = (centre + rng.normal(size=(150, 16)) * 0.1).astype(np.float32)
    original = tools.tf_hlo(distances, x, y)
    rewritten, changed = tools.run_passes(original, PASS, fast_math=True)
    assert changed
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    reference = ((x64[:, None, :] - y64[None, :, :]) ** 2).sum(-1)
    error_original, error_rewritten = _errors(original, rewritten, [x, y], reference)
    eps = float(np.finfo(np.float32).eps)
    ratio = float((x64 ** 2).sum(-1).max() / reference.max())
    assert error_original <= 4 * eps
    assert error_rewritten > 100 * error_original  # why it is opt-in
    # The documented size: a small multiple of eps |x|^2 / |x - y|^2 (two norms
    # and a 16-term dot each round at the scale of |x|^2).
    assert error_rewritten <= 16 * eps * ratio
