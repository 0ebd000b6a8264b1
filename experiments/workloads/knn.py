"""Experiment 3: brute-force k-nearest neighbours (k = 10), plain XLA vs exla vs KeOps.

Synthetic data (``dataset=uniform``): queries and points drawn from U[0, 1]^d
in float32 (seed 0); 10,000 queries (``--queries``) against n points, L2 for
d in {3, 10, 100} and L1 and cosine at d = 10. Real data
(``dataset=digits``): scikit-learn's bundled 8x8 digits (1,797 images, d = 64,
scaled to [0, 1]), every image queried against all of them, with a small exla
limit so that the program really is rewritten. The user's code builds the
queries x n distance (or similarity) matrix and takes ``tf.math.top_k``, so
plain XLA needs at least 4 * queries * n bytes. KeOps uses ``Genred`` with the
``ArgKMin`` reduction on the same formula; FAISS (``faiss-cpu``) searches an exact
``IndexFlatL2`` (``IndexFlat`` with ``METRIC_L1``, ``IndexFlatIP`` on normalised
vectors for cosine), index built inside the timed call. ``error`` is 1 - recall of the exact
neighbours (float64 NumPy) on 100 sampled queries (ties at float32 precision
can cost a little recall).

exla runs with ``fast_math`` (``--exla_fast_math``) here: the L2 distances
become ``|q|^2 + |p|^2 - 2 q.p`` (a matrix multiply), whose rounding error is
about ``eps |q|^2 / |q - p|^2`` relative to a distance, the trade-off KeOps and
most kNN libraries make too; the recall column measures its effect on the
neighbours found. Without the flag exla splits the direct form instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness.blocks import block_slices
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import grid

NAME = "knn"
SIZE = "n"
PARAMS = ["n", "dataset", "metric", "d", "k", "queries"]
GROUPS = ("dataset", "metric", "d")
FAST_MATH = True  # see the module docstring
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SIZES = [10_000, 100_000, 300_000]
LARGE_SIZES = [1_000_000]
DEFAULT_VARIANTS = [("l2", 3), ("l2", 10), ("l2", 100), ("l1", 10), ("cosine", 10)]
LIMITS = ["1GB"]
DIGITS_LIMIT = "1MB"
SPLIT_SIZE = {"1GB": "100MB", "100MB": "10MB", "1MB": "100KB"}
BACKENDS = ["tf", "exla", "keops", "faiss"]
METRIC_NAMES = ("l2", "l1", "cosine")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="numbers of points n")
    parser.add_argument("--large", action="store_true", help="also n = 1e6 (slow)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--variants", nargs="+", metavar="METRIC:D",
                        help="metric:dimension pairs (default: l2:3 l2:10 l2:100 l1:10 "
                             "cosine:10)")
    parser.add_argument("--no-digits", action="store_true", help="skip the digits data set")


def _variants(specs: list[str] | None) -> list[tuple[str, int]]:
    if not specs:
        return list(DEFAULT_VARIANTS)
    out = []
    for spec in specs:
        metric, _, d = spec.partition(":")
        if metric not in METRIC_NAMES or not d.isdigit():
            raise SystemExit(f"--variants: expected METRIC:D with METRIC in "
                             f"{', '.join(METRIC_NAMES)}, got {spec!r}")
        out.append((metric, int(d)))
    return out


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        sizes, limits, queries = [2000], ["1MB"], 500
        variants, digits = [("l2", 3), ("cosine", 10)], True
    else:
        sizes = args.sizes or DEFAULT_SIZES + (LARGE_SIZES if args.large else [])
        limits, queries = LIMITS, args.queries
        variants, digits = _variants(args.variants), not args.no_digits

    out = [c for metric, d in variants
           for c in grid(args, "n", sizes, limits, SPLIT_SIZE, dataset="uniform", metric=metric,
                         d=d, k=10, queries=queries)]
    if digits:
        # The digits run at their own small threshold, whatever the limits asked for.
        own = argparse.Namespace(**{**vars(args), "limits": [DIGITS_LIMIT], "memory_limits": []})
        out += [c for metric in (("l2",) if args.smoke else METRIC_NAMES)
                for c in grid(own, "n", [1797], [], SPLIT_SIZE, dataset="digits", metric=metric,
                              d=64, k=10, queries=1797)]
    return out


def knn(queries: Any, points: Any, metric: str = "l2") -> Any:
    """The user's code: all distances (or similarities), then top-k."""
    import tensorflow as tf

    if metric == "l2":
        score = -tf.reduce_sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    elif metric == "l1":
        score = -tf.reduce_sum(tf.abs(queries[:, None, :] - points[None, :, :]), -1)
    else:
        score = tf.matmul(tf.math.l2_normalize(queries, -1), tf.math.l2_normalize(points, -1),
                          transpose_b=True)
    return tf.math.top_k(score, k=10).indices


def _data(config: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    if config["dataset"] == "digits":
        from sklearn.datasets import load_digits

        images = (load_digits().data / 16.0).astype(np.float32)
        return images, images
    rng = np.random.default_rng(0)
    n, d, nq = int(config["n"]), int(config["d"]), int(config["queries"])
    return (rng.uniform(size=(nq, d)).astype(np.float32),
            rng.uniform(size=(n, d)).astype(np.float32))


def _exact(q: np.ndarray, p: np.ndarray, metric: str, k: int) -> np.ndarray:
    """Exact neighbours in float64 (rows of ``q`` against all of ``p``), over blocks of ``p``."""
    q = q.astype(np.float64)
    if metric == "cosine":
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    best_cost = np.full((len(q), 0), np.inf)
    best_index = np.zeros((len(q), 0), np.int64)
    for cols in block_slices(len(p), 8 * len(q) * p.shape[1]):
        block = p[cols].astype(np.float64)
        if metric == "cosine":
            cost = -(q @ (block / np.linalg.norm(block, axis=1, keepdims=True)).T)
        else:
            diff = q[:, None, :] - block[None, :, :]
            cost = (diff**2).sum(-1) if metric == "l2" else np.abs(diff).sum(-1)
        best_cost = np.concatenate([best_cost, cost], 1)
        best_index = np.concatenate(
            [best_index, np.broadcast_to(np.arange(cols.start, cols.stop), cost.shape)], 1)
        keep = np.argsort(best_cost, axis=1, kind="stable")[:, :k]
        best_cost = np.take_along_axis(best_cost, keep, 1)
        best_index = np.take_along_axis(best_index, keep, 1)
    return best_index


def _keops(q: np.ndarray, p: np.ndarray, metric: str, k: int) -> Any:
    """The KeOps version: ``ArgKMin`` over the same cost."""
    from experiments.workloads.kernel_matvec import keops_build_folder

    keops_build_folder()
    import pykeops
    from pykeops.numpy import Genred

    pykeops.set_verbose(False)
    d = q.shape[1]
    formula = {"l2": "SqDist(X, Y)", "l1": "Sum(Abs(X - Y))", "cosine": "-(X | Y)"}[metric]
    op = Genred(formula, [f"X = Vi({d})", f"Y = Vj({d})"], reduction_op="ArgKMin", axis=1,
                opt_arg=k, dtype="float32")
    if metric == "cosine":  # what a KeOps user writes: normalise once, then an inner product
        def call() -> Any:
            qn = q / np.linalg.norm(q, axis=1, keepdims=True)
            pn = p / np.linalg.norm(p, axis=1, keepdims=True)
            return op(qn, pn, backend="CPU")
        return call
    return lambda: op(q, p, backend="CPU")


def _faiss(q: np.ndarray, p: np.ndarray, metric: str, k: int) -> Any:
    """The FAISS version: an exact flat index over the points, searched with all queries."""
    import faiss

    def call() -> Any:
        if metric == "cosine":
            qn = q / np.linalg.norm(q, axis=1, keepdims=True)
            pn = p / np.linalg.norm(p, axis=1, keepdims=True)
            index = faiss.IndexFlatIP(p.shape[1])
            index.add(pn)
            return index.search(qn, k)[1]
        index = (faiss.IndexFlatL2(p.shape[1]) if metric == "l2"
                 else faiss.IndexFlat(p.shape[1], faiss.METRIC_L1))
        index.add(p)
        return index.search(q, k)[1]
    return call


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    metric, k = config["metric"], int(config["k"])
    q_np, p_np = _data(config)
    backend = config["backend"]
    repeats = int(config.get("repeats", 3))
    if backend == "keops":
        out = measure(_keops(q_np, p_np, metric, k), rec, repeats=repeats)
    elif backend == "faiss":
        out = measure(_faiss(q_np, p_np, metric, k), rec, repeats=repeats)
    else:
        import tensorflow as tf

        from experiments.harness import backends

        q, p = tf.constant(q_np), tf.constant(p_np)

        def user_knn(queries: Any, points: Any) -> Any:
            return knn(queries, points, metric)

        plain, limit = backends.jit(user_knn), backends.limit_of(config)
        rec.update(program=user_knn.__name__, **backends.planned(backends.tf_hlo(plain, (q, p))))
        fn = plain
        if limit is not None:
            rec.update(exla_path=backends.exla_path(), loops_plain=backends.tf_loops(plain, (q, p)))
            fn = backends.exla_compile(user_knn, limit, FAST_MATH)
        out = measure(lambda: np.asarray(fn(q, p)), rec, repeats=repeats)
        if limit is not None:
            rec.update(**backends.plan_fields(fn))
    rows = np.random.default_rng(1).choice(len(q_np), size=min(len(q_np), 100), replace=False)
    exact = _exact(q_np[rows], p_np, metric, k)
    found = np.asarray(out)[rows].astype(np.int64)
    recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, found)])
    rec.update(error=float(1.0 - recall))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs n and time vs n, one panel per data set, metric and d."""
    from experiments.harness.plots import memory_and_time

    uniform = [r for r in rows if r.get("dataset", "uniform") in ("uniform", "")]
    return memory_and_time(uniform, results_dir, NAME, SIZE, "kNN (k=10)",
                           "time per query batch (s)", groups=GROUPS, params=PARAMS)
