"""Experiment 1: kernel matrix-vector product K(X, X) v (the blog's figure).

Squared-exponential kernel, float64, d = 3: ``exp(-|x_i - x_j|^2 / 2) @ v``
written the naive way (the n x n x d broadcast), so plain XLA materialises the
n x n kernel matrix. Backends:

* ``tf``: ``tf.function(jit_compile=True)``, plain TensorFlow/XLA;
* ``exla``: the same function through exla (limit = tensor size threshold);
* ``keops``: pykeops ``Genred`` (NumPy backend, CPU), never builds the matrix;
* ``tf-chunked``: what a user writes by hand: a jit-compiled row block
  (about 100 MB of kernel per block) in a Python loop.

Inputs: x ~ U[0, 1]^(n x 3), v ~ N(0, 1)^n (seed 0). The error is the largest
absolute difference from a NumPy reference on 256 sampled rows, divided by
the largest reference value.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np

from experiments import RESULTS_DIR
from experiments.harness.blocks import block_slices
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import grid

NAME = "kernel_matvec"
SIZE = "n"
PARAMS = ["n", "d"]
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SIZES = [1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 50_000, 100_000]
LARGE_SIZES = [200_000]
LIMITS = ["100MB", "1GB"]
BACKENDS = ["tf", "exla", "keops", "tf-chunked"]
SPLIT_SIZE = {"100MB": "10MB", "1GB": "100MB", "1MB": "100KB"}
CHUNK_BYTES = 100 * 2**20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="values of n (default: 1e3..1e5)")
    parser.add_argument("--large", action="store_true", help="also n = 2e5 (slow)")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        sizes, limits = [800], ["1MB"]
    else:
        sizes = args.sizes or DEFAULT_SIZES + (LARGE_SIZES if args.large else [])
        limits = LIMITS
    return grid(args, "n", sizes, limits, SPLIT_SIZE, d=3)


def kmv(x: Any, v: Any) -> Any:
    """The user's code: the naive squared-exponential kernel matvec."""
    import tensorflow as tf

    d2 = tf.reduce_sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return tf.linalg.matvec(tf.exp(-0.5 * d2), v)


def _inputs(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.uniform(size=(n, d)), rng.normal(size=n)


def _reference_rows(x: np.ndarray, v: np.ndarray, rows: np.ndarray) -> np.ndarray:
    out = np.zeros(len(rows))
    for cols in block_slices(len(x), 8 * len(rows) * x.shape[1]):
        d2 = ((x[rows, None, :] - x[None, cols, :]) ** 2).sum(-1)
        out += np.exp(-0.5 * d2) @ v[cols]
    return out


def _chunked(n: int, x: Any, v: Any) -> Any:
    """Hand-chunked TensorFlow: a jit-compiled row block in a Python loop."""
    import tensorflow as tf

    rows = max(1, min(n, CHUNK_BYTES // (8 * n)))
    pad = (-n) % rows
    xp = tf.concat([x, tf.zeros([pad, x.shape[1]], x.dtype)], 0)

    @tf.function(jit_compile=True)
    def block(xb: Any, x: Any, v: Any) -> Any:
        d2 = tf.reduce_sum((xb[:, None, :] - x[None, :, :]) ** 2, -1)
        return tf.linalg.matvec(tf.exp(-0.5 * d2), v)

    def call() -> Any:
        parts = [block(xp[i:i + rows], x, v) for i in range(0, n + pad, rows)]
        return tf.concat(parts, 0)[:n]

    return call


def keops_build_folder() -> str:
    """pykeops' build cache, kept inside the results folder."""
    return os.environ.setdefault(
        "KEOPS_CACHE_FOLDER", str(RESULTS_DIR / "keops_cache"))


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child (see :mod:`experiments.harness.child`)."""
    n, d, backend = int(config["n"]), int(config["d"]), config["backend"]
    x_np, v_np = _inputs(n, d)
    repeats = int(config.get("repeats", 3))
    if backend == "keops":
        keops_build_folder()
        import pykeops
        from pykeops.numpy import Genred

        pykeops.set_verbose(False)
        op = Genred("Exp(-G * SqDist(X, Y)) * B", ["G = Pm(1)", f"X = Vi({d})", f"Y = Vj({d})",
                                                   "B = Vj(1)"],
                    reduction_op="Sum", axis=1, dtype="float64")
        g, b = np.array([0.5]), v_np[:, None].copy()
        out = measure(lambda: op(g, x_np, x_np, b, backend="CPU"), rec, repeats=repeats)[:, 0]
    else:
        import tensorflow as tf

        from experiments.harness import backends

        x, v = tf.constant(x_np), tf.constant(v_np)
        if backend == "tf-chunked":
            call = _chunked(n, x, v)
        else:
            plain, limit = backends.jit(kmv), backends.limit_of(config)
            # The program that runs: its loops and planned memory are read from
            # TensorFlow's XLA dump of it (experiments.harness.executed).
            rec.update(program=kmv.__name__)
            if config.get("planned", True):
                rec.update(**backends.planned(backends.tf_hlo(plain, (x, v))))
            fn = backends.exla_compile(kmv, limit) if limit is not None else plain
            if limit is not None:
                rec.update(exla_path=backends.exla_path(), loops_plain=backends.tf_loops(plain, (x, v)))
            call = lambda: fn(x, v)  # noqa: E731
        out = measure(lambda: np.asarray(call()), rec, repeats=repeats)
        if backend == "exla":
            rec.update(**backends.plan_fields(fn))
    rows = np.random.default_rng(1).choice(n, size=min(n, 256), replace=False)
    ref = _reference_rows(x_np, v_np, rows)
    rec.update(error=float(np.abs(out[rows] - ref).max() / np.abs(ref).max()))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs n and time vs n (log-log), OOM marked."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "Kernel matvec, SE kernel, f64, d=3", "time per product (s)")
