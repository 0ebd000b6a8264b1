"""The memory floor of the SGPR experiment: how large M can get under a memory cap.

    python -m experiments sgpr_floor [--ms 1000 2000 4000 ...]

GPflow's SGPR loss and gradients need some M x M matrices whole (the Cholesky
factors and what is solved against them), whatever exla splits. This plans,
without running, the experiment's program (:mod:`experiments.workloads.sgpr`: N =
20,000 points, float64) at several M under memory limits too small to meet,
so that exla's search halves its threshold until the planned peak stops
falling; the smallest planned peak reached (XLA's CPU buffer assignment:
temporaries, arguments and outputs) is reported in units of one M x M
float64 matrix (8 M^2 bytes). Two searches per M, because neither start
finds the smallest peak at every M: one under a fixed tiny limit (``--limit``,
thresholds of kilobytes, which slice every M x N matrix finely where the
splitter can), one under a limit of ``--limit-units`` M x M matrices
(thresholds from about the size of an M x M matrix down). The smallest peak
over all M is exla's floor today (what its loops keep live besides the M x M
matrices); the peak at the largest M is what exla reaches there. The
largest M that can run under a cap is the largest whose peak plus the
process's own memory (TensorFlow, GPflow and the data, measured by the
experiment before its first call) fits. The physical floor, what no split of
the N dimension can remove, is plain XLA's plan of the same program with 50
training points: the M x M matrices XLA keeps live at once.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import time
from pathlib import Path

from experiments import RESULTS_DIR
from experiments.harness.runner import read_rows

DEFAULT_MS = [1000, 2000, 4000, 6000, 8000]
_MIB = 2**20


def floor_of(m: int, n_train: int, limits: list[int]) -> dict[str, float]:
    """XLA's smallest planned peak of SGPR at ``m`` inducing points over searches under
    each of ``limits`` (bytes); planned only, nothing runs."""
    import exla

    from experiments.workloads import sgpr
    from experiments.harness import backends

    model = sgpr.make_model(m, n_train)
    hlo = backends.tf_hlo(backends.jit(sgpr.loss_and_gradients(model)), ())
    unit = 8 * m * m
    plans = []
    start = time.perf_counter()
    for limit in limits:
        _, report = exla.optimize_hlo(hlo, memory_limit=limit)  # warns: the limit is unreachable
        plans.append((report.limit_plan.peak_bytes, limit, report.limit_plan))
    peak, limit, plan = min(plans, key=lambda p: p[0])
    return {"m": m, "plain_mb": plan.peak_bytes_before / _MIB, "floor_mb": peak / _MIB,
            "io_mb": plan.floor_bytes / _MIB, "units": peak / unit,
            "plain_units": plan.peak_bytes_before / unit,
            "by_search": " / ".join(f"{p / unit:.2f}" for p, _, _ in plans),
            "threshold": plan.chosen.threshold or 0,
            "candidates": sum(len(p.candidates) for _, _, p in plans),
            "seconds": time.perf_counter() - start}


def working_set_units(m: int, n_small: int = 50) -> float:
    """Plain XLA's planned peak of the same program with only ``n_small`` training
    points, in M x M float64 matrices: the M x M matrices XLA keeps live at once
    when nothing N-sized is left, i.e. what any split of the N dimension must
    still hold (the inducing points are drawn at random: nothing runs)."""
    import gpflow
    import numpy as np

    from exla.bridge.xla import planned_memory, proto_to_text
    from experiments.workloads import sgpr
    from experiments.harness import backends

    rng = np.random.default_rng(0)
    model = gpflow.models.SGPR(
        (rng.uniform(size=(n_small, 3)), rng.normal(size=(n_small, 1))),
        gpflow.kernels.SquaredExponential(lengthscales=[0.3] * 3, variance=1.0),
        inducing_variable=rng.uniform(size=(m, 3)), noise_variance=0.1)
    hlo = backends.tf_hlo(backends.jit(sgpr.loss_and_gradients(model)), ())
    return planned_memory(proto_to_text(hlo)).total_bytes / (8 * m * m)


def measured_base_mb(results_dir: Path) -> float | None:
    """The largest RSS before the first call in the SGPR experiment's rows (MiB)."""
    values = [float(r["base_rss_mb"]) for r in read_rows(results_dir / "sgpr.csv")
              if r.get("base_rss_mb")]
    return max(values) if values else None


def largest_m(units: float, cap_mb: float, base_mb: float) -> int:
    """The largest M with ``units`` M x M float64 matrices plus ``base_mb`` within ``cap_mb``.

    >>> largest_m(8.0, 4096, 1024)
    7094
    """
    return int(math.sqrt((cap_mb - base_mb) * _MIB / (8 * units)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments sgpr_floor",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--ms", type=int, nargs="+", default=DEFAULT_MS)
    parser.add_argument("--n-train", type=int, default=20_000)
    parser.add_argument("--limit", default="4MB", help="the fixed tiny limit of the first search")
    parser.add_argument("--limit-units", type=float, default=4.0,
                        help="the second search's limit, in M x M float64 matrices")
    parser.add_argument("--cap-gb", type=float, default=4.0)
    parser.add_argument("--base-mb", type=float,
                        help="the process's own memory (default: the largest base_rss_mb in "
                             "results/sgpr.csv)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    from exla.options import parse_size

    logging.getLogger("exla").setLevel(logging.ERROR)  # the over-limit warnings, expected
    base = args.base_mb if args.base_mb is not None else measured_base_mb(args.results_dir)
    if base is None:
        parser.error("no base_rss_mb in results/sgpr.csv: run the experiment or give --base-mb")
    print(f"SGPR loss + gradients, N = {args.n_train}, float64; exla's search under memory_limit="
          f"{args.limit} and under {args.limit_units:g} M x M matrices (XLA CPU buffer "
          f"assignment, nothing run)")
    print("| M | plain XLA peak (MiB) | exla's smallest peak (MiB) | in M x M matrices | "
          "per search (tiny / M x M) | plain in M x M | arguments + outputs (MiB) | "
          "threshold | plans | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for m in args.ms:
        r = floor_of(m, args.n_train, [parse_size(args.limit),
                                       int(args.limit_units * 8 * m * m)])
        rows.append(r)
        print(f"| {m} | {r['plain_mb']:.0f} | {r['floor_mb']:.1f} | {r['units']:.2f} | "
              f"{r['by_search']} | {r['plain_units']:.1f} | {r['io_mb']:.2f} | "
              f"{r['threshold']} | {r['candidates']} | {r['seconds']:.0f} |", flush=True)
    cap_mb = args.cap_gb * 1024
    units = working_set_units(min(args.ms))
    print(f"\nplain XLA with N = 50 at M = {min(args.ms)}: {units:.2f} M x M float64 matrices "
          f"live at once (the physical floor); with the process it fits the cap up to "
          f"M = {largest_m(units, cap_mb, base)}")
    floor = min(r["units"] for r in rows)
    top = max(rows, key=lambda r: r["m"])
    print(f"\ncap {cap_mb:.0f} MiB; the process before its first call: {base:.0f} MiB")
    print(f"floor: {floor:.2f} M x M float64 matrices (the smallest over M); with the process "
          f"it fits the cap up to M = {largest_m(floor, cap_mb, base)}")
    print(f"exla's smallest plan at M = {top['m']}: {top['units']:.2f} M x M matrices; fits "
          f"the cap up to M = {largest_m(top['units'], cap_mb, base)}")
    return 0
