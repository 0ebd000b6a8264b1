"""kNN chunk study: exla's time against the split size of its loop, with KeOps alongside.

The kNN program of :mod:`experiments.workloads.knn` (k = 10, L2, d = 3, float32,
10,000 queries against n = 1,000,000 points) at one exla threshold (1GB),
with the split size (``--xla_tensor_split_size``) swept. At d = 3 the
distance expansion does not pay (it would save less than 8x), so exla splits
the direct form: one loop over blocks of queries whose difference tensor
(queries x n x 3 float32, 12 MB per query at n = 1e6) is at most the split
size; each iteration computes the block's distances and its top-k. The split
size thus decides how many queries one iteration handles; ``exla_plan``
records the loop exla built (chunks and rows per chunk). KeOps runs right
after each exla configuration, so that each ratio compares two runs made in
the same machine state.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiments.harness.sweep import grid
from experiments.workloads.knn import FAST_MATH, run  # noqa: F401  (the child runs knn's code)

NAME = "knn_split"
SIZE = "split_mb"
PARAMS = ["split_mb", "n", "dataset", "metric", "d", "k", "queries"]
METRICS: list[str] = []
DEFAULT_CAP_GB = 8.0
DEFAULT_SPLITS_MB = [12, 24, 60, 100, 240, 600, 1000]  # 1 to 80 queries per chunk
LIMITS = ["1GB"]
BACKENDS = ["exla", "keops"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--splits-mb", type=int, nargs="+", help="split sizes, in MB "
                        f"(default: {' '.join(map(str, DEFAULT_SPLITS_MB))})")
    parser.add_argument("--n", type=int, default=1_000_000, help="number of points")
    parser.add_argument("--queries", type=int, default=10_000)


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run: each split size for exla, and KeOps next to each."""
    if args.smoke:
        splits, limits, n, queries = [1, 2], ["3MB"], 2000, 500
    else:
        splits, limits = args.splits_mb or DEFAULT_SPLITS_MB, LIMITS
        n, queries = args.n, args.queries
    out = grid(args, SIZE, splits, limits, {}, n=n, dataset="uniform", metric="l2", d=3, k=10,
               queries=queries)
    for config in out:
        if config["backend"] == "exla":
            config["split_size"] = f"{config[SIZE]}MB"
    return out


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory and time per query batch against the split size."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE,
                           "kNN (k=10, L2, d=3) against exla's split size (MB)",
                           "time per query batch (s)", params=PARAMS)
