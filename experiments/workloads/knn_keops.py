"""kNN: exla against KeOps ``argKmin`` in one process, timed alternately.

    python -m experiments knn_keops [--limits 500MB 1GB] [--repeats 3] [--n 1000000]

The user's TensorFlow code of ``knn.py`` (L2, all distances then
``tf.math.top_k``, k = 10) over 10,000 queries and n points in U[0, 1]^3,
float32, through ``exla.function`` with only a ``memory_limit`` (plain XLA
would hold queries x n distances: 40 GB at n = 1,000,000), against KeOps'
``ArgKMin`` on ``SqDist`` (CPU). After one untimed call of each, the two are
called in turn, ``--repeats`` rounds per limit, and every call is one row of
``experiments/results/knn_keops.csv`` with the 1-minute load average just
before and after it, so that both are judged under the same load. Also per
row: whether the executable that ran is exla's (``ran_rewritten``, read from
TensorFlow's XLA dump), its planned peak and loops, exla's plan, and
``error`` = 1 - recall against the float64 neighbours of 100 sampled queries.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from experiments import RESULTS_DIR
from experiments.harness.runner import read_rows
from experiments.harness.tables import number
from experiments.workloads import knn

COLUMNS = ["run_id", "n", "queries", "d", "k", "limit", "backend", "round", "time_s",
           "load_before", "load_after", "error", "ran_rewritten", "loops", "planned_peak_mb",
           "first_call_s", "plan", "note", "commit", "fast_math"]


def alternate(calls: dict[str, Callable[[], Any]], rounds: int) -> list[dict[str, Any]]:
    """Calls each of ``calls`` in turn, ``rounds`` times: one record per call
    (backend, round, seconds, the load average before and after it)."""
    records = []
    for round_ in range(rounds):
        for backend, call in calls.items():
            before = os.getloadavg()[0]
            start = time.perf_counter()
            call()
            records.append({"backend": backend, "round": round_,
                            "time_s": time.perf_counter() - start,
                            "load_before": before, "load_after": os.getloadavg()[0]})
    return records


def _recall_error(found: Any, exact: Any, rows: Any, k: int) -> float:
    import numpy as np

    found = np.asarray(found)[rows].astype(np.int64)
    return float(1.0 - np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, found)]))


def _exla_program(limit: str, q: Any, p: Any, dump_dir: Path,
                  fast_math: bool) -> tuple[Callable[[], Any], dict]:
    """exla's program under ``limit`` after its first call, and what ran, as row fields."""
    import numpy as np

    import exla

    from experiments.harness import backends
    from experiments.harness.executed import tf_executed

    def user_knn(queries: Any, points: Any) -> Any:
        return knn.knn(queries, points, "l2")

    fn = exla.function(user_knn, memory_limit=limit, fast_math=fast_math)
    start = time.perf_counter()
    first = np.asarray(fn(q, p))
    fields = {"first_call_s": time.perf_counter() - start, "first": first}
    ran = tf_executed(dump_dir, user_knn.__name__, exla=True)
    fields.update({key: ran.get(key) for key in ("ran_rewritten", "loops", "planned_peak_mb")})
    fields["plan"] = backends.plan_fields(fn).get("exla_plan", "")
    return (lambda: np.asarray(fn(q, p))), fields


def measure(n: int, queries: int, limits: list[str], rounds: int, dump_dir: Path,
            fast_math: bool = False) -> list[dict[str, Any]]:
    """The rows of one run: per limit, exla and KeOps alternately."""
    import numpy as np
    import pykeops
    import tensorflow as tf

    k, d = 10, 3
    q_np, p_np = knn._data({"dataset": "uniform", "n": n, "d": d, "queries": queries})
    sample = np.random.default_rng(1).choice(queries, size=min(queries, 100), replace=False)
    exact = knn._exact(q_np[sample], p_np, "l2", k)
    keops = knn._keops(q_np, p_np, "l2", k)
    start = time.perf_counter()
    first = keops()
    keops_fields = {"first_call_s": time.perf_counter() - start,
                    "error": _recall_error(first, exact, sample, k),
                    "note": f"pykeops {pykeops.__version__}, CPU"}
    q, p = tf.constant(q_np), tf.constant(p_np)
    rows = []
    for limit in limits:
        call, fields = _exla_program(limit, q, p, dump_dir, fast_math)
        fields["error"] = _recall_error(fields.pop("first"), exact, sample, k)
        for record in alternate({"exla": call, "keops": keops}, rounds):
            record.update(fields if record["backend"] == "exla" else keops_fields)
            rows.append({"n": n, "queries": queries, "d": d, "k": k, "limit": limit,
                         "fast_math": "yes" if fast_math else "no", **record})
            print(", ".join(f"{c}={rows[-1][c]:.4g}" if isinstance(rows[-1].get(c), float)
                            else f"{c}={rows[-1][c]}" for c in COLUMNS if c in rows[-1]),
                  flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments knn_keops",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--limits", nargs="+", default=["500MB", "1GB"])
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds per limit")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--fast-math", action="store_true",
                        help="exla with fast_math too (as knn.py runs it: |q|^2 + |p|^2 - 2 q.p)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    import tempfile

    from experiments.harness.executed import dump_flags
    from experiments.harness.machine import machine_info
    from experiments.harness.runner import append_rows

    # Before TensorFlow reads XLA_FLAGS: its XLA dumps what it compiles to run.
    dump_dir = Path(tempfile.mkdtemp(prefix="exla_knn_keops_"))
    os.environ["XLA_FLAGS"] = " ".join([f for f in [os.environ.get("XLA_FLAGS", "")] if f]
                                       + dump_flags(dump_dir))
    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    commit = machine_info().get("commit", "")
    rows = measure(args.n, args.queries, args.limits, args.repeats, dump_dir, args.fast_math)
    for row in rows:
        row.update(run_id=run_id, commit=commit)
    append_rows(args.results_dir / "knn_keops.csv", rows, COLUMNS)
    print(*knn_keops_section(args.results_dir), sep="\n")
    return 0


def knn_keops_section(results_dir: Path) -> list[str]:
    """The RESULTS.md section of ``knn_keops.csv``: per exla setting (only
    ``memory_limit``, or with ``fast_math`` too) its newest run, per limit."""
    rows = read_rows(results_dir / "knn_keops.csv")
    if not rows:
        return []
    # A run's setting is its exla rows' (KeOps rows of early runs do not carry it).
    setting = {row["run_id"]: row.get("fast_math") or "no" for row in rows
               if row["backend"] == "exla"}
    newest = {setting[row["run_id"]]: row["run_id"] for row in rows}
    rows = [row for row in rows if newest[setting[row["run_id"]]] == row["run_id"]]
    head = ["n", "limit", "exla fast_math", "exla (s)", "KeOps (s)", "exla / KeOps", "rounds",
            "load before/after each call", "exla's program ran", "planned peak exla (MiB)",
            "1 - recall (exla, KeOps)", "exla's plan", "run"]
    out = ["## knn_keops", "", f"`python -m experiments knn_keops [--fast-math]`: "
           f"{rows[0]['queries']} queries, d = {rows[0]['d']}, k = {rows[0]['k']}; exla "
           "(`memory_limit`, with `fast_math` where said) and KeOps `ArgKMin` called in turn "
           "in one process; times median [min-max] of the timed calls.",
           "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run_id, limit in dict.fromkeys((row["run_id"], row["limit"]) for row in rows):
        mine = [row for row in rows if (row["run_id"], row["limit"]) == (run_id, limit)]
        times = {b: [float(r["time_s"]) for r in mine if r["backend"] == b]
                 for b in ("exla", "keops")}
        exla_row = next(r for r in mine if r["backend"] == "exla")
        keops_row = next(r for r in mine if r["backend"] == "keops")
        out.append("| " + " | ".join([
            mine[0]["n"], limit, exla_row.get("fast_math") or "no",
            *(_median_range(times[b]) for b in ("exla", "keops")),
            number(statistics.median(times["exla"]) / statistics.median(times["keops"])),
            str(len(times["exla"])),
            " ".join(f"{r['backend']} {number(r['load_before'], 2)}/{number(r['load_after'], 2)}"
                     for r in mine),
            exla_row.get("ran_rewritten", ""), number(exla_row.get("planned_peak_mb")),
            f"{number(exla_row.get('error'))}, {number(keops_row.get('error'))}",
            exla_row.get("plan", ""), run_id]) + " |")
    return out + [""]


def _median_range(times: list[float]) -> str:
    return f"{number(statistics.median(times))} [{number(min(times))}-{number(max(times))}]"
