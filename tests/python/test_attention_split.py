"""Causal attention, forward and backward, split along the keys.

Where a loop over query rows cannot meet the limit, the softmax's row
statistics are computed by a first loop over slices of the keys (running
maximum and rescaled sum, cc/passes/tensor_splitter/reduction_merge.h), and
the output and the three gradients by loops over the same slices: no loop
holds a whole row of scores, in the forward or the backward pass. Each test
runs the rewritten program against the unrewritten one and a float64
reference, checks XLA's buffer assignment against the limit, checks that
every loop runs over the keys, and runs strict, checking that the rewritten
executable is what ran.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

import exla
from tests.python._accuracy import assert_as_close_to

pytestmark = pytest.mark.usefixtures("extension")


def _assert_close(reference, actual, expected) -> None:
    assert_as_close_to(reference, actual, expected, atol_fraction=1e-5)


HEADS, SEQ, HEAD_SIZE = 4, 512, 32  # scores 4 x 512 x 512 f32: 4.2 MB per tensor


def _peak(text: str) -> int:
    from exla.bridge import xla as bridge

    return bridge.planned_memory(text).total_bytes


def _inputs(seed: int) -> list[np.ndarray]:
    """q, k, v and the output's cotangent g, each heads x seq x head_size."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(HEADS, SEQ, HEAD_SIZE)).astype(np.float32) for _ in range(4)]


def _causal_attention64(q, k, v, g) -> list[np.ndarray]:
    """sum(attention(q, k, v) * g) and its gradients in q, k, v, in float64.

    Per head: s = q k^T / sqrt(d) with the upper triangle masked, p =
    softmax(s), o = p v; backward dp = g v^T, ds = p * (dp - rowsum(dp * p)).
    """
    q, k, v, g = (np.asarray(a, np.float64) for a in (q, k, v, g))
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = np.einsum("hqd,hkd->hqk", q, k) * scale
    s = np.where(np.tril(np.ones((SEQ, SEQ), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    o = p @ v
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * scale
    return [np.sum(o * g), ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g]


def _assert_split_along_the_keys(explanation, limit: str, key_dim: int) -> None:
    """Within the limit by XLA's buffer assignment; every loop over the keys
    (dimension ``key_dim`` of a scores-shaped tensor), after the statistics loop."""
    assert explanation.rewritten and explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= exla.parse_size(limit) < _peak(explanation.hlo_before)
    loops = explanation.limit_plan.split_loops
    assert len(loops) >= 3, [loop.description for loop in loops]
    for loop in loops:
        assert (loop.dimension, loop.extent) == (key_dim, SEQ), loop.description
        assert loop.chunk < SEQ  # a slice of each row, never the whole row
    assert "merge_body" in explanation.hlo_after  # the running maximum and sum


def test_jax_causal_dot_product_attention_splits_the_keys():
    require("jax")
    import jax
    import jax.numpy as jnp

    from exla.jax import compile_hook

    limit = "3MB"  # arguments + outputs 1.8 MB; the unrewritten program plans 27 MB

    def loss(q, k, v, g):
        o = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
        return jnp.sum(o * g)

    # jax.nn.dot_product_attention takes batch x seq x heads x head_size.
    args = [np.ascontiguousarray(np.swapaxes(a, 0, 1))[None] for a in _inputs(seed=7)]
    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1, 2))
    explanation = exla.explain(exla.jit(value_and_grad, memory_limit=limit), *args)
    # JAX's scores are batch x heads x queries x 1 x keys (or x keys x 1).
    key_dim = 4
    _assert_split_along_the_keys(explanation, limit, key_dim)

    before = set(compile_hook.rewritten_programs())
    value, grads = exla.jit(value_and_grad, memory_limit=limit, strict=True)(*args)
    assert set(compile_hook.rewritten_programs()) - before  # exla's executable ran
    expected_value, expected_grads = jax.jit(value_and_grad)(*args)
    to_heads = lambda a: np.swapaxes(np.asarray(a)[0], 0, 1)  # noqa: E731
    reference = _causal_attention64(*(to_heads(a) for a in args))
    _assert_close(reference, [value, *(to_heads(d) for d in grads)],
                        [expected_value, *(to_heads(d) for d in expected_grads)])


def test_tf_masked_causal_attention_splits_the_keys():
    require("tensorflow")
    import tensorflow as tf
    limit = "4MB"  # arguments + outputs 1.8 MB; the unrewritten program plans 27 MB

    def fwd_bwd(q, k, v, g):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(HEAD_SIZE)
            causal = tf.linalg.band_part(tf.ones((SEQ, SEQ)), -1, 0) > 0
            scores = tf.where(causal, scores, -1e9)
            o = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
            loss = tf.reduce_sum(o * g)
        return [loss, *tape.gradient(loss, [q, k, v])]

    args = _inputs(seed=8)
    explanation = exla.explain(fwd_bwd, *args, memory_limit=limit)
    _assert_split_along_the_keys(explanation, limit, key_dim=2)

    f = exla.function(fwd_bwd, memory_limit=limit, strict=True)
    actual = [t.numpy() for t in f(*args)]
    assert f.programs[0].rewritten and f.programs[0].runs >= 1  # exla's program ran
    expected = [t.numpy() for t in tf.function(fwd_bwd, jit_compile=True)(*args)]
    _assert_close(_causal_attention64(*args), actual, expected)
