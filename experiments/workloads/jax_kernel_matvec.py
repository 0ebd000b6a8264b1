"""Experiment 1 in JAX: kernel matrix-vector product K(X, X) v with ``jax.jit``.

The JAX twin of :mod:`experiments.workloads.kernel_matvec`: the same naive
squared-exponential kernel matvec (float64, d = 3, the n x n x d broadcast),
written as a user would in JAX. Backends:

* ``jax``: ``jax.jit``, plain JAX/XLA;
* ``exla``: the *unchanged* script with exla's flags in ``XLA_FLAGS`` (exla
  rewrites the program at JAX's compile step).

Inputs, reference and error as in :mod:`experiments.workloads.kernel_matvec`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness import backends
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import grid
from experiments.workloads.kernel_matvec import SPLIT_SIZE, _inputs, _reference_rows

NAME = "jax_kernel_matvec"
SIZE = "n"
PARAMS = ["n", "d"]
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SIZES = [1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 50_000, 100_000]
LIMITS = ["100MB", "1GB"]
BACKENDS = ["jax", "exla"]
FRAMEWORK = "jax"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="values of n (default: 1e3..1e5)")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    sizes, limits = ([800], ["1MB"]) if args.smoke else (args.sizes or DEFAULT_SIZES, LIMITS)
    return grid(args, "n", sizes, limits, SPLIT_SIZE, d=3)


def kmv(x: Any, v: Any) -> Any:
    """The user's code: the naive squared-exponential kernel matvec."""
    import jax.numpy as jnp

    d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d2) @ v


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child (exla, if any, came with XLA_FLAGS)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    n, d = int(config["n"]), int(config["d"])
    x_np, v_np = _inputs(n, d)
    x, v = jax.numpy.asarray(x_np), jax.numpy.asarray(v_np)
    # The executable that runs, compiled ahead of time (exla's flags rewrite it
    # at JAX's compile step): its loops and planned memory are the row's.
    fn, fields = backends.jax_compiled(kmv, (x, v), config["backend"])
    rec.update(program=kmv.__name__, **fields)
    if config["backend"] == "exla":
        rec.update(exla_path="flags")
    out = measure(lambda: np.asarray(fn(x, v)), rec, repeats=int(config.get("repeats", 3)))
    rows = np.random.default_rng(1).choice(n, size=min(n, 256), replace=False)
    ref = _reference_rows(x_np, v_np, rows)
    rec.update(error=float(np.abs(out[rows] - ref).max() / np.abs(ref).max()))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs n and time vs n (log-log), OOM marked."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "Kernel matvec in JAX, SE kernel, f64, d=3",
                           "time per product (s)")
