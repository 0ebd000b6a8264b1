"""Experiment 3: brute-force k-nearest neighbours (L2, k = 10), plain XLA vs exla vs KeOps.

Queries and points are drawn from U[0, 1]^d in float32 (seed 0); 10,000
queries (``--queries``), n points. The user's code builds the queries x n
distance matrix and takes ``tf.math.top_k`` of its negation, so plain XLA
needs 4 * queries * n bytes. KeOps uses ``Genred`` with the ``ArgKMin``
reduction. ``error`` is 1 - recall of the exact neighbours (NumPy) on 100
sampled queries (ties at float32 precision can cost a little recall).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness.child import Recorder, measure

NAME = "knn"
SIZE = "n"
PARAMS = ["n", "d", "k", "queries"]
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SIZES = [10_000, 30_000, 100_000, 300_000]
LARGE_SIZES = [1_000_000]
LIMITS = ["1GB"]
SPLIT_SIZE = {"1GB": "100MB", "100MB": "10MB", "1MB": "100KB"}
BACKENDS = ["tf", "exla", "keops"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="numbers of points n")
    parser.add_argument("--large", action="store_true", help="also n = 1e6 (slow)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--dims", type=int, nargs="+", default=[3], help="dimensions d")
    parser.add_argument("--backends", nargs="+", default=BACKENDS, choices=BACKENDS)
    parser.add_argument("--limits", nargs="+", default=LIMITS, help="exla's size thresholds")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        sizes, limits, queries, dims = [2000], ["1MB"], 500, [3]
    else:
        sizes = args.sizes or DEFAULT_SIZES + (LARGE_SIZES if args.large else [])
        limits, queries, dims = args.limits, args.queries, args.dims
    out = []
    for n in sizes:
        for d in dims:
            for backend in args.backends:
                for limit in (limits if backend == "exla" else [""]):
                    out.append({"backend": backend, "n": n, "d": d, "k": 10, "queries": queries,
                                "limit": limit, "split_size": SPLIT_SIZE.get(limit, ""),
                                "repeats": args.repeats})
    return out


def knn(queries: Any, points: Any) -> Any:
    """The user's code: all distances, then top-k."""
    import tensorflow as tf

    d2 = tf.reduce_sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    return tf.math.top_k(-d2, k=10).indices


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    n, d, k, nq = (int(config[key]) for key in ("n", "d", "k", "queries"))
    rng = np.random.default_rng(0)
    q_np = rng.uniform(size=(nq, d)).astype(np.float32)
    p_np = rng.uniform(size=(n, d)).astype(np.float32)
    backend = config["backend"]
    repeats = int(config.get("repeats", 3))
    if backend == "keops":
        from experiments.kernel_matvec import keops_build_folder

        keops_build_folder()
        import pykeops
        from pykeops.numpy import Genred

        pykeops.set_verbose(False)
        op = Genred("SqDist(X, Y)", [f"X = Vi({d})", f"Y = Vj({d})"], reduction_op="ArgKMin",
                    axis=1, opt_arg=k, dtype="float32")
        out = measure(lambda: op(q_np, p_np, backend="CPU"), rec, repeats=repeats)
    else:
        import tensorflow as tf

        from experiments.harness import backends

        q, p = tf.constant(q_np), tf.constant(p_np)
        plain = backends.jit(knn)
        before, after = backends.planned_temp_mb(plain, (q, p), config["limit"] or None,
                                                 config["split_size"] or None)
        rec.update(planned_temp_plain_mb=before,
                   planned_temp_mb=after if backend == "exla" else before)
        if backend == "exla":
            rec.update(exla_path=backends.exla_path())
            fn = backends.exla_compile(knn, config["limit"], config["split_size"] or None)
        else:
            fn = plain
        out = measure(lambda: np.asarray(fn(q, p)), rec, repeats=repeats)
    rows = np.random.default_rng(1).choice(nq, size=min(nq, 100), replace=False)
    d2 = ((q_np[rows, None, :].astype(np.float64) - p_np[None, :, :]) ** 2).sum(-1)
    exact = np.argsort(d2, axis=1)[:, :k]
    found = np.asarray(out)[rows].astype(np.int64)
    recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, found)])
    rec.update(error=float(1.0 - recall))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs n and time vs n."""
    from experiments.harness.plots import plot_vs_size

    return [
        plot_vs_size(rows, SIZE, "peak_rss_mb", "peak RSS of the process (MiB)",
                     results_dir / f"{NAME}_memory.png", "kNN (k=10, L2): peak memory"),
        plot_vs_size(rows, SIZE, "time_s", "time per query batch (s)",
                     results_dir / f"{NAME}_time.png", "kNN (k=10, L2): time"),
    ]
