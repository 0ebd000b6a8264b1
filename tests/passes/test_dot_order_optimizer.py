"""Tests of the `dot-order-optimizer` pass on real TensorFlow and JAX programs.

Positive tests lower a real program with a matrix chain written in a
wasteful order and check
  * that the chain was reordered, by the HLO: the n x n (or d x d) product is
    gone from ENTRY and no dot result is larger than a vector per batch;
  * that results match the original program, both executed through
    TensorFlow's XLA (`call_hlo`), to a relative error of 1e-10 for float64
    and 1e-4 for float32, measured against the largest output element;
  * that XLA's planned temporary memory dropped (the factor is printed; run
    pytest with -s). `(K @ K) @ v` is measured at K 5,000 x 5,000 (compiled
    only: the original would spend 2.5e11 flops) and executed at 600 x 600.
Negative tests: chains already in the best order, chains whose inner
product is also used elsewhere, and single dots are left alone (text
unchanged, changed=False).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pass_tools as tools  # noqa: E402

_exla = tools.load_extension()

PASS = ["dot-order-optimizer"]
F64_RTOL = 1e-10
F32_RTOL = 1e-4


_rng = tools.rng
_tf_function = tools.tf_function


def _dot_result_sizes(text):
    return [int(np.prod(dims)) for _, dims, op in tools.entry_arrays(text)
            if op == "dot"]


def _check(original, args, rtol, label):
    rewritten, changed = tools.run_passes(original, PASS)
    assert changed, f"{label}: chain not reordered"
    before = tools.execute(original, args)
    after = tools.execute(rewritten, args)
    assert len(before) == len(after)
    for i, (a, b) in enumerate(zip(after, before)):
        tools.assert_close(a, b, rtol, f"{label} output {i}")
    return rewritten


# --------------------------------------------------------------------------
# (K @ K) @ v
# --------------------------------------------------------------------------

def _kkv():
    return _tf_function(lambda k, v: (k @ k) @ v)


def test_kkv_planned_memory_at_5000():
    import tensorflow as tf

    n = 5000
    original = tools.tf_hlo(_kkv(), tf.TensorSpec([n, n], tf.float64),
                            tf.TensorSpec([n, 1], tf.float64))
    rewritten, changed = tools.run_passes(original, PASS)
    assert changed
    assert max(_dot_result_sizes(original)) == n * n
    assert max(_dot_result_sizes(rewritten)) == n
    factor = tools.memory_factor("(K@K)@v K 5000x5000 f64", original,
                                 rewritten)
    assert factor > 1000  # 200 MB for K@K -> a few vectors


def test_kkv_results_match():
    rng = _rng(0)
    k = rng.normal(size=(600, 600))
    v = rng.normal(size=(600, 1))
    original = tools.tf_hlo(_kkv(), k, v)
    rewritten = _check(original, [k, v], F64_RTOL, "(K@K)@v")
    assert max(_dot_result_sizes(rewritten)) == 600
    assert tools.memory_factor("(K@K)@v K 600x600 f64", original,
                               rewritten) > 100


# --------------------------------------------------------------------------
# (X^T X) w, written with a transpose and with transpose_a
# --------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["transpose", "transpose_a", "row-vector"])
def test_gram_matrix_times_vector(form):
    import tensorflow as tf

    if form == "transpose":
        f = _tf_function(lambda x, w: (tf.transpose(x) @ x) @ w)
    elif form == "transpose_a":
        f = _tf_function(lambda x, w: tf.matmul(
            tf.matmul(x, x, transpose_a=True), w))
    else:  # w^T (X^T X): the chain read from the other end
        f = _tf_function(lambda x, w: tf.matmul(
            w, tf.matmul(x, x, transpose_a=True), transpose_a=True))
    rng = _rng(1)
    x = rng.normal(size=(8000, 400))
    w = rng.normal(size=(400, 1))
    original = tools.tf_hlo(f, x, w)
    rewritten = _check(original, [x, w], F64_RTOL, f"(X^T X) w [{form}]")
    assert 400 * 400 in _dot_result_sizes(original)
    assert max(_dot_result_sizes(rewritten)) == 8000  # X w
    assert tools.memory_factor(f"(X^T X) w [{form}] X 8000x400 f64",
                               original, rewritten) > 5


# --------------------------------------------------------------------------
# Preconditioned conjugate-gradient step (the rebuttal's example)
# --------------------------------------------------------------------------

def _pcg_step():
    import tensorflow as tf

    def step(a, c, x, r, p):
        # A flexible preconditioner interface: M^-1 given as a product of
        # matrices, applied as written, (C C^T) v.
        def precondition(v):
            return (c @ tf.transpose(c)) @ v

        z = precondition(r)
        ap = a @ p
        alpha = tf.reduce_sum(r * z) / tf.reduce_sum(p * ap)
        x_new = x + alpha * p
        r_new = r - alpha * ap
        z_new = precondition(r_new)
        beta = tf.reduce_sum(r_new * z_new) / tf.reduce_sum(r * z)
        return x_new, r_new, z_new + beta * p

    return _tf_function(step)


def test_preconditioned_cg_step():
    rng = _rng(2)
    n = 1200
    b = rng.normal(size=(n, n)) / np.sqrt(n)
    a = b @ b.T + np.eye(n)
    c = np.tril(rng.normal(size=(n, n))) / np.sqrt(n)
    x = np.zeros((n, 1))
    r = rng.normal(size=(n, 1))
    args = [a, c, x, r, r.copy()]
    original = tools.tf_hlo(_pcg_step(), *args)
    rewritten = _check(original, args, F64_RTOL, "PCG step")
    assert n * n in _dot_result_sizes(original)
    assert max(_dot_result_sizes(rewritten)) == n
    assert tools.memory_factor("PCG step n=1200 f64", original,
                               rewritten) > 100


# --------------------------------------------------------------------------
# Longer and batched chains, scalar factors, JAX
# --------------------------------------------------------------------------

def test_batched_chain_of_four_with_scalar():
    f = _tf_function(lambda k, v: 2.0 * ((k @ k) @ k) @ v)
    rng = _rng(3)
    k = rng.normal(size=(4, 300, 300)) / np.sqrt(300)
    v = rng.normal(size=(4, 300, 2))
    original = tools.tf_hlo(f, k, v)
    rewritten = _check(original, [k, v], F64_RTOL, "batched 2 K K K v")
    assert max(_dot_result_sizes(rewritten)) == 4 * 300 * 2
    assert tools.memory_factor("batched 2*((K@K)@K)@v 4x300x300 f64",
                               original, rewritten) > 50


def test_jax_chain_with_vectors():
    def f(a, b, x):
        return -((a @ b.T) @ (b @ a)) @ x / 3.0

    rng = _rng(4)
    a = rng.normal(size=(500, 500)).astype(np.float32) / np.sqrt(500)
    b = rng.normal(size=(500, 500)).astype(np.float32) / np.sqrt(500)
    x = rng.normal(size=(500,)).astype(np.float32)  # a rank-1 vector
    original = tools.jax_hlo(f, a, b, x)
    rewritten = _check(original, [a, b, x], F32_RTOL, "JAX chain")
    assert max(_dot_result_sizes(rewritten)) == 500
    assert tools.memory_factor("JAX -((A B^T)(B A)) x / 3 500x500 f32",
                               original, rewritten) > 50


# --------------------------------------------------------------------------
# Left alone
# --------------------------------------------------------------------------

def _assert_unchanged(text):
    new_text, changed = tools.run_passes(text, PASS)
    assert not changed
    assert new_text == _exla.round_trip(text)


def test_optimal_chain_is_left_alone():
    rng = _rng(5)
    k = rng.normal(size=(50, 50))
    v = rng.normal(size=(50, 1))
    _assert_unchanged(tools.tf_hlo(_tf_function(lambda k, v: k @ (k @ v)),
                                   k, v))


def test_small_matrices_in_best_order_are_left_alone():
    # (A B) C with A 10x200, B 200x10, C 10x200: the 10x10 product first is
    # already the cheapest order.
    rng = _rng(6)
    a = rng.normal(size=(10, 200))
    b = rng.normal(size=(200, 10))
    c = rng.normal(size=(10, 200))
    f = _tf_function(lambda a, b, c: (a @ b) @ c)
    _assert_unchanged(tools.tf_hlo(f, a, b, c))


def test_inner_product_used_elsewhere_is_left_alone():
    rng = _rng(7)
    k = rng.normal(size=(50, 50))
    v = rng.normal(size=(50, 1))

    def f(k, v):
        kk = k @ k
        return kk @ v, kk

    _assert_unchanged(tools.tf_hlo(_tf_function(f), k, v))


def test_single_dot_is_left_alone():
    rng = _rng(8)
    _assert_unchanged(tools.tf_hlo(_tf_function(lambda a, b: a @ b),
                                   rng.normal(size=(30, 40)),
                                   rng.normal(size=(40, 20))))
