"""The README's headline table, generated from the result CSVs (``python -m experiments report``).

One row per workload: how far plain XLA and exla get under the same memory
cap, exla's time against plain XLA's and KeOps' where both ran in the same
run (median times; each row's range, number of timed calls and load are in
RESULTS.md), and where the rows come from. Only rows whose executable was read and was exla's
program (``ran_rewritten=yes``) count as exla's; a size where exla changed
nothing is named as such, and rows from before the harness read the
executable say so with their run date.

RESULTS.md holds :func:`headline_table`; the README the short form,
:func:`summary_table` (the same rows, without provenance and timings), between
markers that :func:`replace_block` rewrites.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from experiments.harness.plots import latest_rows, series_label
from experiments.harness.runner import read_rows

__all__ = ["WORKLOADS", "binary_size", "headline_table", "summary_table", "replace_block"]

# (title, experiment, size column, size name, plain backend, exla series, row filter, params);
# the exla series may be several labels (limits used in different runs), read as one.
WORKLOADS: list[tuple[str, str, str, str, str, str | tuple[str, ...], dict[str, str],
                      Sequence[str]]] = [
    ("kernel matvec, f64, d = 3", "kernel_matvec", "n", "n", "tf", "exla (100MB)", {}, ("n", "d")),
    ("kNN, 10,000 queries, L2, d = 3", "knn", "n", "n", "tf", "exla (1GB)",
     {"dataset": "uniform", "metric": "l2", "d": "3"}, ("n", "dataset", "metric", "d", "k", "queries")),
    ("kNN, L2, d = 100", "knn", "n", "n", "tf", "exla (1GB)",
     {"dataset": "uniform", "metric": "l2", "d": "100"}, ("n", "dataset", "metric", "d", "k", "queries")),
    ("kNN, L1, d = 10", "knn", "n", "n", "tf", "exla (1GB)",
     {"dataset": "uniform", "metric": "l1", "d": "10"}, ("n", "dataset", "metric", "d", "k", "queries")),
    ("kNN, cosine, d = 10", "knn", "n", "n", "tf", "exla (1GB)",
     {"dataset": "uniform", "metric": "cosine", "d": "10"}, ("n", "dataset", "metric", "d", "k", "queries")),
    ("GPflow SGPR, N = 20,000", "sgpr", "m", "M", "tf", "exla (memory_limit=2GB)", {},
     ("m", "n_train", "iterations")),
    ("GPflow SGPR, N = 278,319 (3droad's shape)", "sgpr_scale", "m", "M", "tf",
     ("exla (memory_limit=6GB)", "exla (memory_limit=5GB)"), {},
     ("m", "n_train", "n_test", "iterations", "svgp_epochs")),
    ("Transformer forward, batch 4, 2 layers", "transformer", "seq", "seq", "tf", "exla (100MB)", {},
     ("seq", "batch", "layers")),
    ("Wide MLP, full-batch Adam", "wide_mlp", "hidden", "width", "tf", "exla (100MB)", {},
     ("hidden", "examples")),
    ("JAX kernel matvec, f64, d = 3", "jax_kernel_matvec", "n", "n", "jax", "exla (100MB)", {},
     ("n", "d")),
    ("JAX wide MLP, full-batch Adam", "jax_wide_mlp", "hidden", "width", "jax", "exla (100MB)", {},
     ("hidden", "examples")),
]


def _f(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def binary_size(mib: Any) -> str:
    """A size given in MiB, in GiB from 1 GiB up.

    >>> binary_size("2048"), binary_size("1010.4"), binary_size("3.25"), binary_size("")
    ('2.00 GiB', '1010 MiB', '3.25 MiB', '?')
    """
    v = _f(mib)
    if v is None:
        return "?"
    if v >= 1024:
        return f"{v / 1024:.2f} GiB"
    return f"{v:.3g} MiB" if v < 100 else f"{v:.0f} MiB"


def _size(value: float) -> str:
    return f"{int(value):,}"


def _run_date(row: dict[str, str]) -> str:
    run = row.get("run_id", "")
    return f"{run[:4]}-{run[4:6]}-{run[6:8]}" if re.match(r"\d{8}-", run) else "undated"


def _provenance(rows: list[dict[str, str]]) -> str:
    """Where a table row's figures come from: run dates, commits, whether what ran was read."""
    read = [r for r in rows if r.get("planned_from") == "executable"]
    old = [r for r in rows if r.get("planned_from") != "executable"]
    parts = []
    if read:
        commits = sorted({r.get("commit", "") for r in read if r.get("commit")})
        parts.append("re-run " + ", ".join(sorted({_run_date(r) for r in read}))
                     + (f" (commit {', '.join(commits)})" if commits else "")
                     + ": what ran was read")
    if old:
        parts.append("rows of " + ", ".join(sorted({_run_date(r) for r in old}))
                     + " not re-run: whether exla's program ran was not recorded")
    return "; ".join(parts)


def _charged(row: dict[str, str]) -> str:
    """The cgroup's peak, what the cap limits, where the row has it. The RSS also
    counts pages of files already in the page cache (TensorFlow's libraries,
    read by earlier processes), which are charged to the cgroup that read them
    first: near the cap the RSS can exceed it while the cgroup does not."""
    return f" ({binary_size(row['cgroup_peak_mb'])} cgroup peak)" if _f(row.get("cgroup_peak_mb")) else ""


def _timing(row: dict[str, str]) -> str:
    n = row.get("repeats", "")
    lo, hi = _f(row.get("time_min_s")), _f(row.get("time_max_s"))
    spread = f" [{lo:.3g}-{hi:.3g}]" if lo is not None and hi is not None else ""
    load = f", load {row['load_avg']}" if row.get("load_avg") else ""
    return f"{_f(row['time_s']):.3g} s{spread}, {n or '?'} timed{load}"


def _same_run_ratios(rows: list[dict[str, str]], peers: list[dict[str, str]],
                     size_key: str) -> list[tuple[float, dict[str, str]]]:
    """``(time / peer's time, row)`` for each row with a peer of its size timed in the
    same run: times compare only within one run (one load on the shared machine)."""
    out = []
    for r in rows:
        p = next((q for q in peers if q[size_key] == r[size_key]
                  and q.get("run_id") == r.get("run_id")), None)
        if p is not None and _f(p.get("time_s")):
            out.append((_f(r["time_s"]) / _f(p["time_s"]), r))
    return out


def _workload_row(title: str, rows: list[dict[str, str]], size_key: str, size_name: str,
                  plain: str, exla: str | tuple[str, ...]) -> list[str]:
    def series(labels: str | tuple[str, ...]) -> list[dict[str, str]]:
        labels = (labels,) if isinstance(labels, str) else labels
        return sorted((r for r in rows if series_label(r) in labels), key=lambda r: float(r[size_key]))

    plain_rows, exla_rows = series(plain), series(exla)
    keops_ok = [r for r in series("keops") if r["status"] == "ok"]
    cap = next((r.get("cap_gb") for r in rows if r.get("cap_gb")), "")
    # Plain XLA: the largest size that ran, and the first failure.
    ok_plain = [r for r in plain_rows if r["status"] == "ok"]
    failed = next((r for r in plain_rows if r["status"] != "ok"), None)
    plain_text = (f"{size_name} = {_size(float(ok_plain[-1][size_key]))}, "
                  f"{binary_size(ok_plain[-1]['peak_rss_mb'])} peak RSS" if ok_plain else "nothing ran")
    if failed is not None:
        plain_text += f" ({failed['status']} at {_size(float(failed[size_key]))})"
    # exla: only rows whose executable was exla's program count.
    ran = [r for r in exla_rows if r["status"] == "ok" and r.get("ran_rewritten") == "yes"]
    unrecorded = [r for r in exla_rows if r["status"] == "ok" and not r.get("ran_rewritten")]
    unchanged = [r for r in exla_rows if r["status"] == "ok" and r.get("ran_rewritten") == "no"]
    notes = []
    exla_text = "—"
    if ran:
        top = ran[-1]
        exla_text = (f"{size_name} = {_size(float(top[size_key]))}, {binary_size(top['peak_rss_mb'])} peak "
                     f"RSS{_charged(top)}, {binary_size(top.get('planned_peak_mb'))} planned (executable), "
                     f"{_timing(top)}")
    if unrecorded and (not ran or float(unrecorded[-1][size_key]) > float(ran[-1][size_key])):
        top = unrecorded[-1]
        old = (f"{size_name} = {_size(float(top[size_key]))}, {binary_size(top['peak_rss_mb'])} peak RSS "
               f"(run {_run_date(top)}, not re-run; whether exla's program ran was not recorded)")
        if ran:
            notes.append("older rows: " + old)
        else:
            exla_text = old
    if unchanged:
        notes.append("exla changed nothing (plain XLA's program ran) at " + size_name + " = "
                     + ", ".join(_size(float(r[size_key])) for r in unchanged))
    other_failures = [r for r in exla_rows if r["status"] not in ("ok",)]
    if other_failures:
        notes.append(", ".join(f"{r['status']} at {_size(float(r[size_key]))}" for r in other_failures))
    if notes:
        exla_text += "; " + "; ".join(notes)
    # Time ratios where both ran and exla's program ran.
    if ran:
        credited, suffix = ran, ""
    else:  # rows from before the harness read what ran: shown, and said to be such
        credited = unrecorded
        suffix = (" (rows of " + ", ".join(sorted({_run_date(r) for r in unrecorded}))
                  + ", not re-run)") if unrecorded else ""
    ratios = [f"{ratio:.2f}× at {_size(float(r[size_key]))}"
              for ratio, r in _same_run_ratios(credited, ok_plain, size_key)]
    keops_ratios = [f"{ratio:.2f}× at {_size(float(r[size_key]))}"
                    for ratio, r in _same_run_ratios(credited, keops_ok, size_key)]
    cells = [f"{title} ({cap} GiB)" if cap else title, plain_text, exla_text,
             (", ".join(ratios) + suffix) if ratios else "—",
             (", ".join(keops_ratios) + suffix) if keops_ratios else "—",
             _provenance(plain_rows + exla_rows)]
    return ["| " + " | ".join(cells) + " |"]


def _headline_rows(path: Path, size_key: str, params: Any,
                   where: dict[str, str]) -> list[dict[str, str]]:
    """A workload's rows for the headline: those matching ``where``, under the
    cap most of its rows ran under (a row run under another cap, e.g. an
    uncapped plain run beside a memory limit, measures something else), the
    latest per size."""
    rows = [r for r in read_rows(path) if all(r.get(k) == v for k, v in where.items())]
    caps = Counter(r.get("cap_gb", "") for r in rows)
    if caps:
        cap = caps.most_common(1)[0][0]
        rows = [r for r in rows if r.get("cap_gb", "") == cap]
    return latest_rows(rows, size_key, params)


def headline_table(results_dir: Path) -> list[str]:
    """The table's lines (markdown)."""
    lines = ["| workload (memory cap) | plain XLA reaches | exla reaches (its own program ran) "
             "| exla time / plain XLA | exla time / KeOps | rows |", "|---|---|---|---|---|---|"]
    for title, name, size_key, size_name, plain, exla, where, params in WORKLOADS:
        rows = _headline_rows(results_dir / f"{name}.csv", size_key, params, where)
        if rows:
            lines += _workload_row(title, rows, size_key, size_name, plain, exla)
    return lines


def _ratio_range(ratios: list[float]) -> str:
    """``0.62×`` or ``0.62–1.21× (4 sizes)``: exla's time over a peer's across sizes."""
    if not ratios:
        return "—"
    lo, hi = min(ratios), max(ratios)
    return f"{lo:.2f}×" if len(ratios) == 1 else f"{lo:.2f}–{hi:.2f}× ({len(ratios)} sizes)"


def _summary_row(title: str, rows: list[dict[str, str]], size_key: str, size_name: str,
                 plain: str, exla: str | tuple[str, ...]) -> str:
    """One workload in a line: largest size each ran, exla's peak RSS, time ratios."""
    labels = (exla,) if isinstance(exla, str) else exla

    def ok(label_set: tuple[str, ...]) -> list[dict[str, str]]:
        return sorted((r for r in rows if series_label(r) in label_set and r["status"] == "ok"),
                      key=lambda r: float(r[size_key]))

    plain_ok, keops_ok = ok((plain,)), ok(("keops",))
    ran = [r for r in ok(labels) if r.get("ran_rewritten") == "yes"]
    failed = sorted((r for r in rows if series_label(r) == plain and r["status"] != "ok"),
                    key=lambda r: float(r[size_key]))
    plain_text = (f"{size_name} = {_size(float(plain_ok[-1][size_key]))}" if plain_ok
                  else "nothing ran")
    if failed:
        plain_text += f" ({failed[0]['status']} at {_size(float(failed[0][size_key]))})"
    exla_text = (f"{size_name} = {_size(float(ran[-1][size_key]))}, "
                 f"{binary_size(ran[-1]['peak_rss_mb'])} peak RSS" if ran else "—")
    unrecorded = [r for r in ok(labels) if not r.get("ran_rewritten")]
    if unrecorded and (not ran or float(unrecorded[-1][size_key]) > float(ran[-1][size_key])):
        exla_text += (f" ({size_name} = {_size(float(unrecorded[-1][size_key]))} in a run of "
                      f"{_run_date(unrecorded[-1])}, which did not record what ran)")

    cap = next((r.get("cap_gb") for r in rows if r.get("cap_gb")), "")
    cells = [f"{title} ({cap} GiB)" if cap else title, plain_text, exla_text,
             _ratio_range([x for x, _ in _same_run_ratios(ran, plain_ok, size_key)]),
             _ratio_range([x for x, _ in _same_run_ratios(ran, keops_ok, size_key)])]
    return "| " + " | ".join(cells) + " |"


def summary_table(results_dir: Path) -> list[str]:
    """The README's short table: what plain XLA and exla reach under one cap, and time ratios.

    exla counts only where its own program ran (read from the executable);
    ratios compare rows of one run. Sizes in binary units (MiB, GiB).
    """
    lines = ["| workload (memory cap) | plain XLA runs up to | exla runs up to (its program ran) "
             "| exla time / plain XLA | exla time / KeOps |", "|---|---|---|---|---|"]
    for title, name, size_key, size_name, plain, exla, where, params in WORKLOADS:
        rows = _headline_rows(results_dir / f"{name}.csv", size_key, params, where)
        if rows:
            lines.append(_summary_row(title, rows, size_key, size_name, plain, exla))
    return lines


def replace_block(text: str, name: str, lines: list[str]) -> str:
    """``text`` with the lines between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``
    replaced; ``ValueError`` when the markers are missing."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        raise ValueError(f"no {start} ... {end} block")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + "\n".join([start, *lines, end]) + tail
