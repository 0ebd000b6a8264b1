"""The program-level memory limit on three gradient workloads.

    python -m experiments memory_limit [attention|sgpr|cross_entropy ...] [--limit 1100MB 1500MB]

* attention forward + backward, 2 x 4 heads x 4,096 x 64 f32,
  ``memory_limit="256MB"``;
* GPflow SGPR loss + gradients, N = 20,000, M = 1,500, f64,
  ``memory_limit="300MB"``;
* large-vocabulary cross entropy, loss and gradients, batch 1,024 x width 256
  x vocabulary 500,000, f32, ``memory_limit="1500MB"``, timed beside
  PyTorch's chunked ``linear_cross_entropy`` (where torch imports; else a
  "not installed" note) and judged, all three, against a float64 reference
  (``linear_cross_entropy.py``);
* ``sgpr_m5000``: the SGPR program at M = 5,000 under ``memory_limit="2GB"``,
  close to its floor (not run by default: about 10 minutes per evaluation
  pair on 2 cores).

For each, one row of ``experiments/results/memory_limit.csv`` (machine and
versions in ``memory_limit.machine.json``): whether the program that ran was
exla's (``ran_rewritten``) and its ``while`` loops, XLA's planned peak of the
two executables that ran (TensorFlow's XLA's buffer assignment, read from
its dump: ``planned_peak_mb``, ``planned_peak_plain_mb``) against the limit,
the plan exla's search chose for that program (its own measured peak in
``search_peak_mb``, candidates, XLA compilations, seconds, plans judged by
the models, and the search's time over one XLA compile of the unrewritten
program, ``search_over_compile``), the time per
evaluation of both programs (median, min and max of ``--repeats`` calls
each, timed alternately after a warm-up) and the largest relative
difference of the results. ``status``: ``ok`` (exla's program ran),
``unchanged`` (exla changed nothing) or ``fallback``. Heavy: minutes per
workload on a small machine, hence not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments import RESULTS_DIR
from experiments.harness.runner import read_rows
from experiments.harness.tables import number
from experiments.workloads import linear_cross_entropy
from experiments.workloads.linear_cross_entropy import resident_peak


def attention(batch: int = 2, heads: int = 4, seq: int = 4096, head_size: int = 64):
    """Multi-head self-attention: loss and gradients w.r.t. the three projections."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    width = heads * head_size
    x = tf.constant(rng.normal(size=(batch, seq, width)).astype(np.float32))
    weights = [tf.Variable(rng.normal(size=(width, width)).astype(np.float32) * 0.05)
               for _ in range(3)]

    def split_heads(t):
        return tf.transpose(tf.reshape(t, (batch, seq, heads, head_size)), (0, 2, 1, 3))

    def fwd_bwd(x):
        with tf.GradientTape() as tape:
            q, k, v = (split_heads(x @ w) for w in weights)
            scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(head_size)
            o = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
            loss = tf.reduce_sum(o**2)
        return loss, tape.gradient(loss, weights)

    return fwd_bwd, (x,)


def sgpr(n: int = 20_000, m: int = 1_500):
    """GPflow SGPR training loss and its gradients (f64)."""
    import gpflow

    from experiments.workloads import sgpr as sgpr_experiment

    x, y, _, _ = sgpr_experiment.make_data(n)
    model = gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(lengthscales=[0.5] * 3),
                               inducing_variable=x[:m].copy())
    return sgpr_experiment.loss_and_gradients(model), ()


def cross_entropy(batch: int = 1024, width: int = 256, vocab: int = 500_000):
    """Large-vocabulary softmax cross entropy (f32): loss and gradients for h and W.

    The logits are batch x vocab (2 GB); the weight gradient (512 MB) is a
    program output, so a loop over the batch must accumulate it whole.
    """
    import tensorflow as tf

    rng = np.random.default_rng(0)
    h = rng.normal(size=(batch, width)).astype(np.float32)
    w = (rng.normal(size=(width, vocab)) * 0.05).astype(np.float32)
    labels = rng.integers(0, vocab, size=(batch,)).astype(np.int32)

    def loss_and_gradients(h, w, labels):
        with tf.GradientTape() as tape:
            tape.watch([h, w])
            logits = h @ w
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        return loss, tape.gradient(loss, [h, w])

    return loss_and_gradients, (h, w, labels)


WORKLOADS = {"attention": (attention, "256MB"), "sgpr": (sgpr, "300MB"),
             "cross_entropy": (cross_entropy, "1500MB"),
             # Near the floor (issue 27): about 6 M x M matrices must exist whole.
             "sgpr_m5000": (lambda: sgpr(m=5_000), "2GB")}
# --smoke (tests/experiments/test_smoke.py): attention small enough for a test.
SMOKE = {"attention": (lambda: attention(batch=1, heads=2, seq=512, head_size=16), "1MB")}


def _flat(result) -> list[np.ndarray]:
    import tensorflow as tf

    return [np.asarray(t) for t in tf.nest.flatten(result)]


def _time_all(calls: dict[str, Callable[[], list[np.ndarray]]], repeats: int,
              first: dict[str, list[np.ndarray]]):
    """Seconds per call of each function, timed in turn, ``repeats`` rounds.

    Alternating puts all of them under the same load on a shared machine; the
    first call of each (tracing, exla, compilation) is not timed, and not made
    again for those whose result ``first`` already holds. Returns the lists of
    times and the first calls' results, by name.
    """
    first = {key: first[key] if key in first else fn() for key, fn in calls.items()}
    times: dict[str, list[float]] = {key: [] for key in calls}
    for _ in range(repeats):
        for key, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return times, first


COLUMNS = ["run_id", "workload", "shape", "limit", "status", "ran_rewritten", "loops", "loops_plain",
           "planned_peak_mb", "planned_peak_plain_mb", "planned_from", "limit_met",
           "search_peak_mb", "search_fits", "plan", "recomputed_gflop", "candidates",
           "xla_compiles", "search_s", "exla_s", "model_plans", "model_s", "plain_compile_s",
           "search_over_compile", "repeats", "plain_time_s", "plain_time_min_s",
           "plain_time_max_s", "exla_time_s", "exla_time_min_s", "exla_time_max_s", "ratio",
           "error", "load_avg", "note", "commit", "plain_error_f64", "error_f64",
           "torch_time_s", "torch_time_min_s", "torch_time_max_s", "torch_ratio",
           "torch_peak_mb", "torch_error_f64", "torch_note"]
SHAPES = {"attention": "2 x 4 heads x 4096 x 64, f32", "sgpr": "N = 20000, M = 1500, f64",
          "cross_entropy": "1024 x 256, vocabulary 500000, f32",
          "sgpr_m5000": "N = 20000, M = 5000, f64"}
SMOKE_SHAPES = {"attention": "1 x 2 heads x 512 x 16, f32"}


def _torch_cross_entropy(args, limit_bytes: int):
    h, w, labels = args
    rows = linear_cross_entropy.torch_chunk_rows(*h.shape, w.shape[1], limit_bytes)
    return linear_cross_entropy.torch_chunked(h, w, labels, rows)


# Each workload's peer (a call and a note, given the arguments and the limit in
# bytes; ImportError without it) and its float64 reference of the results.
PEERS = {"cross_entropy": ("torch", _torch_cross_entropy)}
REFERENCES = {"cross_entropy": linear_cross_entropy.reference64}


def _peer(name: str, args, limit_bytes: int) -> dict[str, Any]:
    """The workload's peer: ``call`` and ``torch_note``, or only a note saying
    why it cannot run (none for a workload without a peer)."""
    if name not in PEERS:
        return {}
    peer, build = PEERS[name]
    try:
        call, note = build(args, limit_bytes)
    except ImportError as e:
        return {"torch_note": f"{peer} not installed: {e}"}
    return {"call": call, "torch_note": note}


def _peer_fields(name: str, args, first: dict[str, list[np.ndarray]],
                       times: dict[str, list[float]]) -> dict[str, Any]:
    """Each program's error against the workload's float64 reference (none
    without one) and the peer's times (median, min, max) and ratio to plain."""
    from experiments.workloads.attention import error

    out: dict[str, Any] = {}
    if "torch" in times:
        median = statistics.median(times["torch"])
        out.update(torch_time_s=median, torch_time_min_s=min(times["torch"]),
                   torch_time_max_s=max(times["torch"]),
                   torch_ratio=median / statistics.median(times["plain"]))
    if name in REFERENCES:
        reference = REFERENCES[name](*args)
        for key, column in (("plain", "plain_error_f64"), ("exla", "error_f64"),
                            ("torch", "torch_error_f64")):
            if key in first:
                out[column] = error(first[key], reference)
    return out


def _one_compile(fn, args, search_seconds: float) -> dict:
    """One XLA compile of the unrewritten program (jaxlib's CPU client, as the
    search compiles), the yardstick for the search's time."""
    from exla.bridge import xla as bridge
    from exla.optimize import as_hlo_text

    from experiments.harness import backends

    text = as_hlo_text(backends.tf_hlo(backends.jit(fn), args))
    start = time.perf_counter()
    bridge.planned_memory(text)
    seconds = time.perf_counter() - start
    return {"plain_compile_s": seconds, "search_over_compile": search_seconds / seconds}


def measure(name: str, repeats: int, dump_dir: Path, smoke: bool = False,
            limit: str | None = None) -> dict:
    """One workload: both programs run, timed, and read back from XLA's dump of them.

    ``limit`` replaces the workload's own memory limit."""
    import tensorflow as tf

    import exla
    from exla.options import format_size

    from experiments.harness.executed import tf_executed

    build, default_limit = (SMOKE if smoke else WORKLOADS)[name]
    limit = limit or default_limit
    fn, args = build()
    load_start = os.getloadavg()[0]
    plain_fn = tf.function(fn, jit_compile=True)
    exla_fn = exla.function(fn, memory_limit=limit)
    calls = {"plain": lambda: _flat(plain_fn(*args)), "exla": lambda: _flat(exla_fn(*args))}
    peer, first = _peer(name, args, exla.parse_size(limit)), {}
    if "call" in peer:
        calls["torch"] = peer.pop("call")
        first["torch"], peak = resident_peak(calls["torch"])
        if peak is not None:
            peer["torch_peak_mb"] = (peak + sum(np.asarray(a).nbytes for a in args)) / 2**20
    timed, first = _time_all(calls, repeats, first)
    plain_times, exla_times, expected, actual = (timed["plain"], timed["exla"], first["plain"],
                                                 first["exla"])
    row: dict = {"workload": name, "shape": (SMOKE_SHAPES if smoke else SHAPES)[name],
                 "limit": limit, "repeats": repeats,
                 "load_avg": f"{load_start:.1f}/{os.getloadavg()[0]:.1f}"}
    # What ran: TensorFlow's XLA dumped both programs as it compiled them.
    plain_ran = tf_executed(dump_dir, fn.__name__, exla=False)
    exla_ran = tf_executed(dump_dir, fn.__name__, exla=True)
    row.update(loops_plain=plain_ran.get("loops"), planned_peak_plain_mb=plain_ran.get("planned_peak_mb"),
               ran_rewritten=exla_ran.get("ran_rewritten"), loops=exla_ran.get("loops"),
               planned_peak_mb=exla_ran.get("planned_peak_mb"),
               planned_from=exla_ran.get("planned_from"))
    if row["planned_peak_mb"] is not None:
        row["limit_met"] = "yes" if row["planned_peak_mb"] * 2**20 <= exla.parse_size(limit) else "no"
    # What exla's search chose for the program that ran (its own report).
    info = exla_fn.programs[-1] if exla_fn.programs else None
    plan = info.report.limit_plan if info is not None else None
    if info is not None:
        print(f"== {name}, memory_limit={limit}")
        print(info.report)
        row["exla_s"] = info.seconds
    if plan is not None:
        row.update(search_peak_mb=plan.peak_bytes / 2**20, search_fits="yes" if plan.fits else "no",
                   plan=str(plan.chosen) if plan.chosen else "",
                   recomputed_gflop=(plan.chosen.recomputed_flops / 1e9) if plan.chosen else 0,
                   candidates=len(plan.candidates), xla_compiles=plan.xla_compiles,
                   search_s=plan.xla_seconds + plan.exla_seconds + plan.model_seconds,
                   model_plans=plan.model_plans, model_s=plan.model_seconds)
        row.update(_one_compile(fn, args, row["search_s"]))
    for key, times in (("plain", plain_times), ("exla", exla_times)):
        row.update({f"{key}_time_s": statistics.median(times), f"{key}_time_min_s": min(times),
                    f"{key}_time_max_s": max(times)})
    row["ratio"] = row["exla_time_s"] / row["plain_time_s"]
    row.update(peer, **_peer_fields(name, args, first, timed))
    row["error"] = max(float(np.max(np.abs(a - e)) / (np.max(np.abs(e)) or 1.0))
                       for a, e in zip(actual, expected))
    if row["ran_rewritten"] == "yes":
        row["status"] = "ok"
    elif info is not None and info.rewritten:
        row["status"] = "fallback"
        row["note"] = "exla rewrote the program, but the executable that ran is the original"
    else:
        row["status"] = "unchanged" if info is not None else "fallback"
    print(f"ran: exla's program {row['ran_rewritten']}, {row['loops']} loop(s) (plain "
          f"{row['loops_plain']}); planned peak of the executables (TensorFlow's XLA): plain "
          f"{format_size(int((row['planned_peak_plain_mb'] or 0) * 2**20))}, exla "
          f"{format_size(int((row['planned_peak_mb'] or 0) * 2**20))}, limit {limit}: "
          f"{row.get('limit_met')}")
    print(f"time per evaluation ({repeats} each): plain XLA {row['plain_time_s']:.3f} s "
          f"[{row['plain_time_min_s']:.3f}-{row['plain_time_max_s']:.3f}], exla "
          f"{row['exla_time_s']:.3f} s [{row['exla_time_min_s']:.3f}-{row['exla_time_max_s']:.3f}] "
          f"({row['ratio']:.2f}x); largest relative difference {row['error']:.2e}; load average "
          f"{row['load_avg']} on {os.cpu_count()} cores")
    sys.stdout.flush()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments memory_limit",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", help=f"of {', '.join(WORKLOADS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--smoke", action="store_true", help="attention only, tiny (for tests)")
    parser.add_argument("--limit", nargs="+", default=[None],
                        help="memory limits instead of each workload's own (e.g. 1100MB 1500MB)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.workloads = list(SMOKE)
    args.workloads = args.workloads or [w for w in WORKLOADS if w != "sgpr_m5000"]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    import datetime
    import json
    import tempfile

    from experiments.harness.executed import dump_flags
    from experiments.harness.machine import machine_info
    from experiments.harness.runner import append_rows

    # Before TensorFlow reads XLA_FLAGS: its XLA dumps what it compiles to run.
    dump_dir = Path(tempfile.mkdtemp(prefix="exla_memory_limit_"))
    os.environ["XLA_FLAGS"] = " ".join([f for f in [os.environ.get("XLA_FLAGS", "")] if f]
                                       + dump_flags(dump_dir))
    args.results_dir.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    info["command"] = "python -m experiments memory_limit " + " ".join(
        sys.argv[1:] if argv is None else argv)
    (args.results_dir / "memory_limit.machine.json").write_text(json.dumps(info, indent=2) + "\n")
    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for name in args.workloads:
        for limit in args.limit:
            row = measure(name, args.repeats, dump_dir, smoke=args.smoke, limit=limit)
            row.update(run_id=run_id, commit=info.get("commit", ""))
            append_rows(args.results_dir / "memory_limit.csv", [row], COLUMNS)
    return 0


def memory_limit_section(results_dir: Path) -> list[str]:
    """The RESULTS.md section of ``memory_limit.csv``, if any."""
    rows = read_rows(results_dir / "memory_limit.csv")
    if not rows:
        return []
    newest: dict[tuple[str, str], dict[str, str]] = {}  # by workload and limit
    for row in rows:
        newest[(row["workload"], row["limit"])] = row
    head = ["workload", "limit", "status", "exla's program ran", "loops (plain)",
            "planned peak plain (MiB)", "planned peak exla (MiB)", "limit met",
            "search: peak (MiB), candidates, XLA compiles", "plain XLA (s)", "exla (s)",
            "exla / plain", "timed calls", "rel. difference", "load", "run"]
    out = ["## memory_limit", "",
           "`python -m experiments memory_limit`: the program-level limit on three gradient "
           "workloads, in one process without a memory cap; planned peaks are TensorFlow's "
           "XLA's buffer assignment of the two executables that ran; times median [min-max].",
           "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in newest.values():
        out.append("| " + " | ".join([
            f"{row['workload']} ({row.get('shape', '')})", row["limit"], row["status"],
            row.get("ran_rewritten", ""), f"{row.get('loops', '')} ({row.get('loops_plain', '')})",
            number(row.get("planned_peak_plain_mb")), number(row.get("planned_peak_mb")),
            row.get("limit_met", ""),
            f"{number(row.get('search_peak_mb'))}, {row.get('candidates', '')}, "
            f"{row.get('xla_compiles', '')}",
            f"{number(row.get('plain_time_s'))} [{number(row.get('plain_time_min_s'))}-"
            f"{number(row.get('plain_time_max_s'))}]",
            f"{number(row.get('exla_time_s'))} [{number(row.get('exla_time_min_s'))}-"
            f"{number(row.get('exla_time_max_s'))}]",
            number(row.get("ratio")), row.get("repeats", ""), number(row.get("error")),
            row.get("load_avg", ""), row.get("run_id", "")]) + " |")
    return out + [""] + _peer_table(newest.values())


def _peer_table(rows) -> list[str]:
    """The rows timed beside a peer (PyTorch): the three times from the same
    run, each one's error against float64 and the peaks."""
    rows = [row for row in rows if row.get("torch_note")]
    if not rows:
        return []
    head = ["workload", "limit", "plain XLA (s)", "exla (s)", "PyTorch (s)", "exla / plain",
            "PyTorch / plain", "planned peak exla (MiB)", "PyTorch measured peak (MiB)",
            "error vs float64: plain, exla, PyTorch", "PyTorch", "load", "run"]
    out = ["Beside PyTorch's chunked `linear_cross_entropy`, timed alternately in the same run; "
           "PyTorch's peak is the process's resident growth during its first call (Linux "
           "VmHWM, reset before it) plus its arguments; errors normwise against float64.",
           "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        out.append("| " + " | ".join([
            row["workload"], row["limit"], number(row.get("plain_time_s")),
            number(row.get("exla_time_s")), number(row.get("torch_time_s")),
            number(row.get("ratio")), number(row.get("torch_ratio")),
            number(row.get("planned_peak_mb")), number(row.get("torch_peak_mb")),
            ", ".join(number(row.get(c)) for c in ("plain_error_f64", "error_f64",
                                                   "torch_error_f64")),
            row["torch_note"], row.get("load_avg", ""), row.get("run_id", "")]) + " |")
    return out + [""]
