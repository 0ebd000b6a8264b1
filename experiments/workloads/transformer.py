"""Experiment 4: the forward pass of a small Transformer as the sequence grows.

Two pre-norm encoder layers (d_model 128, 4 heads of 32, feed-forward width
512, ReLU), batch 4, float32, written the textbook way in TensorFlow: every
head's full ``seq x seq`` score matrix and softmax, so plain XLA needs
``4 * batch * heads * seq^2`` bytes per score tensor (1 GiB at seq = 8192).
Inputs x ~ N(0, 1) of shape (4, seq, 128), weights ~ N(0, 1/128) (seed 0),
passed as arguments. ``error``: largest absolute difference from a float64
NumPy reference on 32 sampled output positions of the first sequence in the
batch, divided by the largest reference value (the reference computes layer 1
for every position in query blocks, layer 2 only at the sampled positions).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness.blocks import block_slices
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import grid

NAME = "transformer"
SIZE = "seq"
PARAMS = ["seq", "batch", "layers"]
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SIZES = [256, 1024, 2048, 4096, 8192, 16384]
LARGE_SIZES = [32768]
LIMITS = ["100MB"]
SPLIT_SIZE = {"100MB": "20MB", "1GB": "100MB", "1MB": "200KB"}
BACKENDS = ["tf", "exla"]
D_MODEL, HEADS, FFN = 128, 4, 512


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="sequence lengths")
    parser.add_argument("--large", action="store_true", help="also seq = 32768 (slow)")
    parser.add_argument("--batch", type=int, default=4)


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        sizes, limits, batch = [256], ["1MB"], 2
    else:
        sizes = args.sizes or DEFAULT_SIZES + (LARGE_SIZES if args.large else [])
        limits, batch = LIMITS, args.batch
    return grid(args, "seq", sizes, limits, SPLIT_SIZE, batch=batch, layers=2)


def make_weights(layers: int, seed: int = 0) -> list[np.ndarray]:
    """Per layer: Wq, Wk, Wv, Wo (d x d), W1 (d x ffn), W2 (ffn x d); float32."""
    rng = np.random.default_rng(seed)
    shapes = [(D_MODEL, D_MODEL)] * 4 + [(D_MODEL, FFN), (FFN, D_MODEL)]
    return [(rng.normal(size=s) / np.sqrt(s[0])).astype(np.float32)
            for _ in range(layers) for s in shapes]


def encoder(x: Any, *weights: Any) -> Any:
    """The user's code: pre-norm Transformer encoder layers, plain attention."""
    import tensorflow as tf

    batch, seq = x.shape[0], x.shape[1]
    head = D_MODEL // HEADS

    def norm(t: Any) -> Any:
        mean, var = tf.nn.moments(t, axes=[-1], keepdims=True)
        return (t - mean) * tf.math.rsqrt(var + 1e-5)

    def heads(t: Any) -> Any:
        return tf.transpose(tf.reshape(t, (batch, seq, HEADS, head)), (0, 2, 1, 3))

    for i in range(0, len(weights), 6):
        wq, wk, wv, wo, w1, w2 = weights[i:i + 6]
        h = norm(x)
        q, k, v = heads(h @ wq), heads(h @ wk), heads(h @ wv)
        scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(head).astype(np.float32)
        attn = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
        x = x + tf.reshape(tf.transpose(attn, (0, 2, 1, 3)), (batch, seq, D_MODEL)) @ wo
        x = x + tf.nn.relu(norm(x) @ w1) @ w2
    return x


def _reference_layer(x: np.ndarray, rows: np.ndarray, w: list[np.ndarray]) -> np.ndarray:
    """One encoder layer in float64 for the query positions ``rows`` of one sequence.

    Query blocks keep each score block small, so that the reference does not
    dominate the peak memory measured for the process.
    """
    def norm(t: np.ndarray) -> np.ndarray:
        return (t - t.mean(-1, keepdims=True)) / np.sqrt(t.var(-1, keepdims=True) + 1e-5)

    wq, wk, wv, wo, w1, w2 = (np.float64(a) for a in w)
    head = D_MODEL // HEADS
    h = norm(x)
    k = (h @ wk).reshape(len(x), HEADS, head).transpose(1, 0, 2)
    v = (h @ wv).reshape(len(x), HEADS, head).transpose(1, 0, 2)
    out = np.empty((len(rows), D_MODEL))
    for b in block_slices(len(rows), 8 * HEADS * len(x)):
        r = rows[b]
        q = (h[r] @ wq).reshape(len(r), HEADS, head).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(head)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attn = (scores / scores.sum(-1, keepdims=True)) @ v
        y = x[r] + attn.transpose(1, 0, 2).reshape(len(r), D_MODEL) @ wo
        out[b] = y + np.maximum(norm(y) @ w1, 0) @ w2
    return out


def reference(x0: np.ndarray, weights: list[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """The encoder's output at positions ``rows`` of the sequence ``x0`` (float64)."""
    x = np.float64(x0)
    layers = [weights[i:i + 6] for i in range(0, len(weights), 6)]
    for w in layers[:-1]:
        x = _reference_layer(x, np.arange(len(x)), w)
    return _reference_layer(x, rows, layers[-1])


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    import tensorflow as tf

    from experiments.harness import backends

    seq, batch, layers = int(config["seq"]), int(config["batch"]), int(config["layers"])
    x_np = np.random.default_rng(0).normal(size=(batch, seq, D_MODEL)).astype(np.float32)
    weights_np = make_weights(layers)
    args = [tf.constant(a) for a in [x_np] + weights_np]
    plain, limit = backends.jit(encoder), backends.limit_of(config)
    rec.update(program=encoder.__name__, **backends.planned(backends.tf_hlo(plain, args)))
    fn = plain
    if limit is not None:
        rec.update(exla_path=backends.exla_path(), loops_plain=backends.tf_loops(plain, args))
        fn = backends.exla_compile(encoder, limit)
    out = measure(lambda: fn(*args).numpy(), rec, repeats=int(config.get("repeats", 3)))
    if limit is not None:
        rec.update(**backends.plan_fields(fn))
    rows = np.sort(np.random.default_rng(1).choice(seq, size=min(seq, 32), replace=False))
    ref = reference(x_np[0], weights_np, rows)
    rec.update(error=float(np.abs(out[0, rows] - ref).max() / np.abs(ref).max()))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs sequence length and time vs sequence length."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "Transformer forward (2 layers, d=128, 4 heads, batch 4)", "time per forward pass (s)")
