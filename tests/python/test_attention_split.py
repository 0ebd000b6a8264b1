"""Attention, forward and backward, split along the keys in one pass each way.

Where a loop over the keys carries the split, one loop computes each row's
statistics and the output together (running maximum, rescaled sum and
rescaled weighted sum: cc/passes/tensor_splitter/weighted_sums.h), the
backward's rowsum(dP ∘ P) is read from the output, rowsum(dO ∘ O)
(cc/passes/tensor_splitter/product_row_sums.h), and one more loop computes
dQ, dK and dV slice by slice from the saved statistics: the scores are
computed once in each direction, as FlashAttention does. Each test checks
XLA's buffer assignment against the limit, the two loops and what they
recompute (exla's report), runs strict and checks that the rewritten
executable is what ran, and judges its numbers against the unrewritten
program's and a float64 reference (tests/python/_accuracy.py).

Sizes: 2 heads x 512 queries x 512 keys (2.1 MB of f32 scores per tensor),
heads of 16. At this size a loop over query rows can also meet the limit;
where the models prefer it (no mask, or a mask given as an argument), the
tests set a split size below the keys' 64 KB, as a limit of 256MB does for
8,192 keys. The loss is not judged: a scalar's error is one draw; the output
and the gradients are.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

import exla
from tests.python._accuracy import assert_as_close_to

pytestmark = pytest.mark.usefixtures("extension")

HEADS, SEQ, HEAD_SIZE = 2, 512, 16
KEY_SPLIT = "32KB"  # below the keys' 64 KB: the loops run over the keys
SCORE_FLOPS = 2 * HEADS * SEQ * SEQ * HEAD_SIZE  # q kᵀ once


def _peak(text: str) -> int:
    from exla.bridge import xla as bridge

    return bridge.planned_memory(text).total_bytes


def _attention64(q, k, v, g, *, bias=None, mask=None, causal=False) -> list[np.ndarray]:
    """attention(q, k, v) and its vjp with g, in float64, per head (batch 1).

    s = q kᵀ / sqrt(d) + bias, masked; p = softmax(s), o = p v; backward
    dp = g vᵀ, ds = p ∘ (dp - rowsum(dp ∘ p)) / sqrt(d).
    """
    q, k, v, g = (np.swapaxes(np.asarray(a, np.float64)[0], 0, 1) for a in (q, k, v, g))
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = np.einsum("hqd,hkd->hqk", q, k) * scale
    if bias is not None:
        s = s + np.asarray(bias, np.float64)[0]
    keep = np.ones(s.shape, bool)
    if mask is not None:
        keep &= np.asarray(mask)[0]
    if causal:
        keep &= np.tril(np.ones((SEQ, SEQ), bool))
    s = np.where(keep, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * scale
    results = [p @ v, ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g]
    return [np.swapaxes(r, 0, 1)[None] for r in results]


def _assert_one_pass_each_way(explanation, limit: str, key_dim: int) -> None:
    """Within the limit by XLA's buffer assignment; two loops over the keys
    (dimension ``key_dim`` of the scores), the first accumulating the output,
    and the scores computed again once (the backward loop's), not twice."""
    assert explanation.rewritten and explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= exla.parse_size(limit) < _peak(explanation.hlo_before)
    loops = [loop for loop in explanation.limit_plan.split_loops if len(loop.extents) >= 3]
    assert len(loops) == 2, [loop.description for loop in explanation.limit_plan.split_loops]
    for loop in loops:
        assert (loop.dimension, loop.extent) == (key_dim, SEQ), loop.description
        assert loop.chunk < SEQ  # a slice of each row, never the whole row
    assert loops[0].accumulated, loops[0].description  # the output, in the statistics' pass
    recomputed = sum(loop.recomputed_flops for loop in explanation.limit_plan.split_loops)
    assert recomputed < 1.25 * SCORE_FLOPS, [loop.description for loop in loops]
    assert "merge_body" in explanation.hlo_after


_VARIANTS = {  # limit, split size, is_causal, bias, mask
    "causal": ("3MB", None, True, False, False),
    "no mask": ("3MB", KEY_SPLIT, False, False, False),
    "bias": ("3MB", None, False, True, False),
    "mask": ("3MB", KEY_SPLIT, False, False, True),
}


def _jax_inputs(variant: str) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """q, k, v, g (batch x seq x heads x head_size) and the bias or mask."""
    rng = np.random.default_rng(sorted(_VARIANTS).index(variant))
    args = [rng.normal(size=(1, SEQ, HEADS, HEAD_SIZE)).astype(np.float32) for _ in range(4)]
    extra = {}
    if _VARIANTS[variant][3]:
        extra["bias"] = rng.normal(size=(1, 1, SEQ, SEQ)).astype(np.float32)
    if _VARIANTS[variant][4]:  # every row keeps its diagonal
        extra["mask"] = (rng.random((1, 1, SEQ, SEQ)) < 0.7) | np.eye(SEQ, dtype=bool)
    return args, extra


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_jax_dot_product_attention_in_one_pass(variant, dtype):
    require("jax")
    import jax
    import jax.numpy as jnp

    from exla.jax import compile_hook

    limit, split_size, causal, _, _ = _VARIANTS[variant]
    args, extra = _jax_inputs(variant)
    names = sorted(extra)
    low = jnp.dtype(dtype)

    def attention_vjp(q, k, v, g, *rest):
        kw = dict(zip(names, rest))
        if "bias" in kw:
            kw["bias"] = kw["bias"].astype(low)

        def attention(q, k, v):
            return jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation="xla",
                                                **kw)

        o, back = jax.vjp(attention, *(a.astype(low) for a in (q, k, v)))
        return (o, *back(g.astype(low)))

    inputs = args + [extra[n] for n in names]
    options = dict(memory_limit=limit, split_size=split_size)
    explanation = exla.explain(exla.jit(attention_vjp, **options), *inputs)
    # JAX's scores are batch x 1 x heads x queries x keys.
    _assert_one_pass_each_way(explanation, limit, key_dim=4)

    before = len(compile_hook.rewritten_programs())
    actual = exla.jit(attention_vjp, strict=True, **options)(*inputs)
    assert len(compile_hook.rewritten_programs()) > before  # exla's executable ran
    expected = jax.jit(attention_vjp)(*inputs)
    reference = _attention64(*args, **extra, causal=causal)
    # bf16 results of two programs differ by bf16 roundings: judged normwise only.
    assert_as_close_to(reference, actual, expected,
                       atol_fraction=1e-5 if dtype == "float32" else None)


def _tf_masked_attention(tf, q, k, v, g):
    """Causal attention as TensorFlow users mask it (band_part + where), its
    output and gradients."""
    with tf.GradientTape() as tape:
        tape.watch([q, k, v])
        scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(HEAD_SIZE)
        causal = tf.linalg.band_part(tf.ones((SEQ, SEQ)), -1, 0) > 0
        scores = tf.where(causal, scores, -1e9)
        o = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
    return [o, *tape.gradient(o, [q, k, v], output_gradients=g)]


def test_tf_masked_attention_in_one_pass():
    require("tensorflow")
    import tensorflow as tf
    limit = "3MB"  # arguments + outputs 0.5 MB; the unrewritten program plans 13 MB

    def fwd_bwd(q, k, v, g):
        return _tf_masked_attention(tf, q, k, v, g)

    rng = np.random.default_rng(8)
    args = [rng.normal(size=(HEADS, SEQ, HEAD_SIZE)).astype(np.float32) for _ in range(4)]
    explanation = exla.explain(fwd_bwd, *args, memory_limit=limit, split_size=KEY_SPLIT)
    _assert_one_pass_each_way(explanation, limit, key_dim=2)

    f = exla.function(fwd_bwd, memory_limit=limit, split_size=KEY_SPLIT, strict=True)
    actual = [t.numpy() for t in f(*args)]
    assert f.programs[0].rewritten and f.programs[0].runs >= 1  # exla's program ran
    expected = [t.numpy() for t in tf.function(fwd_bwd, jit_compile=True)(*args)]
    to_jax = [np.swapaxes(a, 0, 1)[None] for a in args]
    reference = [np.swapaxes(r[0], 0, 1) for r in _attention64(*to_jax, causal=True)]
    assert_as_close_to(reference, actual, expected, atol_fraction=1e-5)


def test_tf_masked_attention_scores_once_under_the_limit_alone():
    # With the limit alone the models choose the plan: at this size a loop
    # over query rows, the backward's row sums no longer needing a pass over
    # the keys. Whatever they choose computes the scores at most twice.
    require("tensorflow")
    import tensorflow as tf
    limit = "3MB"

    def fwd_bwd(q, k, v, g):
        return _tf_masked_attention(tf, q, k, v, g)

    rng = np.random.default_rng(9)
    args = [rng.normal(size=(HEADS, SEQ, HEAD_SIZE)).astype(np.float32) for _ in range(4)]
    explanation = exla.explain(fwd_bwd, *args, memory_limit=limit)
    assert explanation.rewritten and explanation.within_memory_limit
    assert _peak(explanation.hlo_after) <= exla.parse_size(limit)
    recomputed = sum(loop.recomputed_flops for loop in explanation.limit_plan.split_loops)
    assert recomputed < 1.25 * SCORE_FLOPS, explanation.limit_plan.summary()
    f = exla.function(fwd_bwd, memory_limit=limit, strict=True)
    actual = [t.numpy() for t in f(*args)]
    assert f.programs[0].rewritten and f.programs[0].runs >= 1
    expected = [t.numpy() for t in tf.function(fwd_bwd, jit_compile=True)(*args)]
    to_jax = [np.swapaxes(a, 0, 1)[None] for a in args]
    reference = [np.swapaxes(r[0], 0, 1) for r in _attention64(*to_jax, causal=True)]
    assert_as_close_to(reference, actual, expected, atol_fraction=1e-5)
