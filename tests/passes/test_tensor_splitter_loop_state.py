"""A loop body's running accumulator split by a nested loop that writes each
slice back into the state's own buffer (``Options::in_place_loop_state``,
cc/passes/tensor_splitter/TILING.md), checked numerically against the
unsplit program, both run by jaxlib's CPU client, and for attention against
a float64 NumPy reference.

The C++ tests (tests/cc/tensor_splitter/loop_state_in_place_test.cc) pin
the structure; these run it.
"""

from __future__ import annotations

import re

import numpy as np

from tests._extension import core_optimize, load_extension
from tests._frameworks import require

_exla = load_extension()

from exla.bridge import xla as bridge  # noqa: E402

KB = 1024


def _split(text: str, threshold: int, split_size: int, in_place: bool = True):
    optimized = core_optimize(text, passes=["tensor-splitter", "dce"], threshold=threshold,
                              split_size=split_size, in_place_loop_state=in_place)
    messages = [m for record in optimized.passes for m in record.messages]
    return optimized.text, messages


def _relative_error(actual, expected) -> float:
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-300))


def _left_in_loop_bodies(text: str, messages: list[str]) -> list[str]:
    """What the splitter left whole outside the entry computation of `text`:
    in loop bodies (its own or the program's)."""
    entry = re.search(r"^ENTRY %?([\w.\-]+)", text, re.M).group(1)
    return [m for m in messages if m.startswith("left ") and not m.split()[1].startswith(entry + "/")]


def _jax_text(function, *specs) -> str:
    import jax

    from exla.bridge.jax import lowered_hlo_text

    return lowered_hlo_text(jax.jit(function).lower(*specs))


def test_running_sum_matches_the_unsplit_loop():
    # A program's own loop whose 8 KB state is rescaled and added to, row by
    # row (the shape of FlashAttention's output accumulator), under a 4 KB
    # threshold: the body's update is split by rows and written in place.
    require("jax")
    import jax
    import jax.numpy as jnp

    def running_sum(acc, x):
        return jax.lax.fori_loop(0, 3, lambda i, a: a * 0.5 + jnp.exp(x), acc)

    spec = jax.ShapeDtypeStruct((64, 32), jnp.float32)
    text = _jax_text(running_sum, spec, spec)
    split, messages = _split(text, 4 * KB, 1 * KB)
    assert not _left_in_loop_bodies(text, messages), messages
    assert "dynamic-update-slice" in split  # the rewritten loop is what runs
    rng = np.random.default_rng(0)
    acc0, x = (rng.normal(size=(64, 32)).astype(np.float32) for _ in range(2))
    (result,) = bridge.compile_cpu(split)(acc0, x)
    (unsplit,) = bridge.compile_cpu(text)(acc0, x)
    # Each row is computed by the same operations, in the same order.
    np.testing.assert_array_equal(result, unsplit)


def _attention_reference(q, k, v, g):
    """Causal attention's loss sum(o * g) and gradients in q, k, v, float64 NumPy
    (1 x seq x heads x d, as jax.nn.dot_product_attention takes them)."""
    q, k, v, g = (np.asarray(a, np.float64)[0].transpose(1, 0, 2) for a in (q, k, v, g))
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = np.einsum("hqd,hkd->hqk", q, k) * scale
    s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ v
    dp = g @ v.transpose(0, 2, 1)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    grads = (ds @ k * scale, ds.transpose(0, 2, 1) @ q * scale, p.transpose(0, 2, 1) @ g)
    return [np.sum(o * g)] + [d.transpose(1, 0, 2)[None] for d in grads]


def _attention_text(seq: int) -> str:
    """JAX's causal attention, loss sum(o * g) and its gradients in q, k, v,
    1 x seq x 8 heads x 64, float32."""
    import jax
    import jax.numpy as jnp

    def loss(q, k, v, g):
        o = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
        return jnp.sum(o * g)

    spec = jax.ShapeDtypeStruct((1, seq, 8, 64), jnp.float32)
    return _jax_text(jax.value_and_grad(loss, argnums=(0, 1, 2)), spec, spec, spec, spec)


def _check_attention_numbers(text: str, split: str, seq: int) -> None:
    """The split program no worse than the unsplit one against float64."""
    rng = np.random.default_rng(1)
    inputs = [rng.normal(size=(1, seq, 8, 64)).astype(np.float32) for _ in range(4)]
    reference = _attention_reference(*inputs)
    unsplit_results = bridge.compile_cpu(text)(*inputs)
    split_results = bridge.compile_cpu(split)(*inputs)
    for name, s, u, r in zip(["loss", "dq", "dk", "dv"], split_results, unsplit_results, reference):
        # Twice the unsplit program's error, or 1e-6 of the output's scale
        # (about 8 float32 roundings): the key loop without in-place state
        # already puts the loss at 5.8e-7 against the unsplit 1.1e-7 here.
        err_split, err_unsplit = _relative_error(s, r), _relative_error(u, r)
        assert err_split <= max(2 * err_unsplit, 1e-6), (name, err_split, err_unsplit)


def test_causal_attention_running_state_split_by_rows():
    # Causal attention at seq 256 (scores 2.1 MB) under a 256 KB threshold:
    # the key loop's bodies keep the running output and dQ (rows x heads x
    # 64, 512 KB), which in-place state splits again by rows.
    require("jax")
    text = _attention_text(256)
    split, messages = _split(text, 256 * KB, 64 * KB)
    _, before = _split(text, 256 * KB, 64 * KB, in_place=False)
    assert len(_left_in_loop_bodies(text, messages)) < len(_left_in_loop_bodies(text, before)), messages
    _check_attention_numbers(text, split, 256)


def test_causal_attention_in_tiles_of_rows_and_keys():
    # Key chunks of 32 (N x 32 slices, 256 KB: the split size) and, inside
    # each, row blocks that fit a 128 KB tile: the whole score tile, its
    # statistics and the running state are computed by rows, forward and
    # backward, and nothing in a loop body stays whole.
    require("jax")
    text = _attention_text(256)
    optimized = core_optimize(text, passes=["tensor-splitter", "dce"], threshold=1024 * KB,
                              split_size=256 * KB, tile_size=128 * KB, in_place_loop_state=True)
    messages = [m for record in optimized.passes for m in record.messages]
    nested = [m for m in messages if m.startswith("split ") and "body/" in m.split()[1]]
    assert len(nested) == 2 and all("of extent 256: 4 chunks of 64" in m for m in nested), messages
    assert not _left_in_loop_bodies(text, messages), messages
    _check_attention_numbers(text, optimized.text, 256)
