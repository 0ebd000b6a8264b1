"""``RESULTS.md``: tables and headline numbers generated from the result CSVs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, Sequence

from experiments.harness.plots import group_of, latest_rows, series_label
from experiments import REPO_ROOT, RESULTS_DIR
from experiments.harness.runner import read_rows

__all__ = ["write_report", "headlines", "credit", "memory_limit_section"]

_COLUMNS = [("status", "status"), ("ran_rewritten", "exla's program ran"),
            ("loops", "loops (plain)"), ("time_s", "time (s)"), ("time_min_s", "min-max (s)"),
            ("repeats", "timed calls"), ("first_call_s", "first call (s)"),
            ("peak_rss_mb", "peak RSS (MiB)"), ("planned_temp_mb", "XLA planned temp (MiB)"),
            ("planned_peak_mb", "XLA planned peak (MiB)"), ("error", "rel. error"),
            ("load_avg", "load")]
# Rows written before the harness read the executable that ran: their planned
# figures came from a separate optimize_hlo call, and nothing says whether
# exla's program is what ran.
_OLD_PLANNED = "†"


def _cell(row: dict[str, str], key: str) -> str:
    """One table cell (see ``_COLUMNS``)."""
    if key == "status":
        return row.get("status", "")
    if key == "ran_rewritten":
        if row.get("backend") != "exla":
            return ""
        return row.get("ran_rewritten") or "not recorded"
    if key == "loops":
        if row.get("loops", "") == "":
            return ""
        plain = row.get("loops_plain", "")
        return f"{row['loops']} ({plain})" if plain != "" else row["loops"]
    if key == "time_min_s":
        if not row.get("time_min_s"):
            return ""
        return f"{_num(row['time_min_s'])}-{_num(row.get('time_max_s'))}"
    if key in ("repeats", "load_avg"):
        return row.get(key, "") if row.get("time_s") or key == "load_avg" else ""
    if key in ("planned_temp_mb", "planned_peak_mb") and row.get(key):
        old = row.get("planned_from") != "executable"
        return _num(row.get(key)) + (_OLD_PLANNED if old else "")
    return _num(row.get(key))


def credit(row: dict[str, str]) -> str:
    """Why an exla row's time is not exla's ('' when it is): see :func:`headlines`.

    >>> credit({"backend": "exla", "ran_rewritten": "no"})
    'exla changed nothing: plain XLA ran'
    >>> credit({"backend": "exla", "ran_rewritten": "yes"}), credit({"backend": "tf"})
    ('', '')
    """
    if row.get("backend") != "exla":
        return ""
    if row.get("ran_rewritten") == "no":
        return "exla changed nothing: plain XLA ran"
    if not row.get("ran_rewritten"):
        return "not recorded whether exla's program ran"
    return ""


def _num(value: Any, digits: int = 3) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value or "")
    if v != v:
        return ""
    return f"{v:.{digits}g}"


def headlines(rows: list[dict[str, str]], size_key: str, groups: Sequence[str] = (),
              params: Sequence[str] = ()) -> list[str]:
    """Largest size each series reaches, and exla's time relative to the others.

    With ``groups`` (columns such as ``d``), each group is summarised on its own.
    """
    rows = latest_rows(rows, size_key, params)
    by_group: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_group.setdefault(group_of(row, groups), []).append(row)
    lines = []
    order = {g: [_sort_key(by_group[g][0].get(k, "")) for k in groups] for g in by_group}
    for group in sorted(by_group, key=order.__getitem__):
        prefix = f"[{group}] " if group else ""
        lines += ["- " + prefix + line for line in _group_headlines(by_group[group], size_key)]
    return lines


def _group_headlines(rows: list[dict[str, str]], size_key: str) -> list[str]:
    lines = []
    reach: dict[str, float] = {}
    for row in rows:
        if row["status"] == "ok":
            label = series_label(row)
            reach[label] = max(reach.get(label, 0.0), float(row[size_key]))
    fails: dict[str, str] = {}
    for row in sorted(rows, key=lambda r: float(r[size_key])):
        if row["status"] != "ok":
            fails.setdefault(series_label(row), f"{row['status']} at {size_key}={row[size_key]}")
    for label in sorted(set(reach) | set(fails)):
        lines.append(f"**{label}**: largest {size_key} that ran: "
                     f"{int(reach[label]) if label in reach else 'none'}"
                     + (f" ({fails[label]})" if label in fails else ""))
    by_size: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        if row["status"] == "ok" and row.get("time_s"):
            by_size.setdefault(row[size_key], {})[series_label(row)] = row
    for exla in sorted(l for l in reach if l.startswith("exla")):
        for other in ("tf", "jax", "keops", "tf-chunked"):
            # Times compare only within one run (one load on the shared machine).
            ratios = [(float(s), float(t[exla]["time_s"]) / float(t[other]["time_s"]),
                       credit(t[exla]))
                      for s, t in by_size.items() if exla in t and other in t
                      and float(t[other]["time_s"]) > 0
                      and t[exla].get("run_id") == t[other].get("run_id")]
            if ratios:
                ratios.sort()
                # A row where exla's program did not run is plain XLA's time: say so.
                text = ", ".join(f"{s:g}: {r:.2f}x" + (f" ({w})" if w else "") for s, r, w in ratios)
                lines.append(f"time of **{exla}** / **{other}** by {size_key}: {text}")
    return lines


def _sort_key(value: str) -> tuple:
    """Numbers in numeric order, before text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _table(rows: list[dict[str, str]], size_key: str, params: list[str],
           metrics: list[str]) -> list[str]:
    rows = sorted(latest_rows(rows, size_key, params),
                  key=lambda r: ([_sort_key(r.get(p, "")) for p in params[1:]],
                                 float(r[size_key]), series_label(r)))
    head = ["backend"] + params + [c[1] for c in _COLUMNS] + metrics
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [series_label(r)] + [r.get(p, "") for p in params]
        cells += [_cell(r, k) for k, _ in _COLUMNS]
        cells += [_num(r.get(m)) for m in metrics]
        out.append("| " + " | ".join(cells) + " |")
    return out


def write_report(results_dir: Path = RESULTS_DIR) -> Path:
    """Redraws every experiment's plots and writes RESULTS.md; returns its path."""
    from experiments import EXPERIMENTS

    target = (results_dir.parent / "RESULTS.md" if results_dir.resolve() == RESULTS_DIR
              else results_dir / "RESULTS.md")
    lines = ["# exla experiments: results", "",
             "Generated by `python -m experiments report` from `experiments/results/*.csv`; "
             "the newest row of each configuration is shown. Times are the median of the timed "
             "calls after a warm-up call (their number and range in the row); peak RSS is the "
             "child process's maximum resident set (TensorFlow alone takes a few hundred MiB); "
             "OOM = killed by the memory cap; `fallback` = exla was asked to rewrite but the "
             "original program ran. *exla's program ran* and *loops* (in the plain program's "
             "executable in brackets) are read from the executable that ran, and so are the "
             "planned figures, except those marked " + _OLD_PLANNED + ": rows from before the "
             "harness read them (a separate `optimize_hlo` call; nothing recorded whether "
             "exla's program ran). *load*: the machine's 1-minute load average when the row "
             "started/ended (2 cores; above 2, times are slowed by other jobs).", ""]
    from experiments.harness.headline import headline_table, update_readme

    lines += ["## Headlines", "", *headline_table(results_dir), ""]
    lines += memory_limit_section(results_dir)
    from experiments.tools.cost_rank import cost_rank_section

    lines += cost_rank_section(results_dir)
    from experiments.tools.memory_model import memory_model_section

    lines += memory_model_section(results_dir)
    from experiments.workloads.attention import attention_section

    lines += attention_section(results_dir)
    for name, module_name in EXPERIMENTS.items():
        rows = read_rows(results_dir / f"{name}.csv")
        if not rows:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        info_path = results_dir / f"{name}.machine.json"
        info = json.loads(info_path.read_text()) if info_path.exists() else {}
        lines += [f"## {name}", "", (module.__doc__ or "").strip().splitlines()[0], ""]
        if info:
            v = info.get("versions", {})
            lines += [f"Machine: {info.get('cores')} cores, {info.get('memory_gb')} GiB, "
                      f"{info.get('cpu')}; memory cap {info.get('cap_gb')} GiB "
                      f"({info.get('memory_cap')}); " + ", ".join(f"{k} {x}" for k, x in v.items()),
                      ""]
        for png in module.plot(rows, results_dir):
            rel = png.relative_to(target.parent) if png.is_relative_to(target.parent) else png
            lines.append(f"![{png.stem}]({rel})")
        lines += ["", "Headlines:", ""]
        lines += headlines(rows, module.SIZE, getattr(module, "GROUPS", ()), module.PARAMS)
        lines += [""]
        params = [module.SIZE] + [p for p in module.PARAMS if p != module.SIZE]
        lines += _table(rows, module.SIZE, params, module.METRICS) + [""]
    target.write_text("\n".join(lines) + "\n")
    if results_dir.resolve() == RESULTS_DIR:
        # The README's headline table comes from the same files.
        update_readme(REPO_ROOT / "README.md", results_dir)
    return target


def memory_limit_section(results_dir: Path) -> list[str]:
    """The table of ``memory_limit.csv`` (``python -m experiments.workloads.memory_limit``), if any."""
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
           "`python -m experiments.workloads.memory_limit`: the program-level limit on three gradient "
           "workloads, in one process without a memory cap; planned peaks are TensorFlow's "
           "XLA's buffer assignment of the two executables that ran; times median [min-max].",
           "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in newest.values():
        out.append("| " + " | ".join([
            f"{row['workload']} ({row.get('shape', '')})", row["limit"], row["status"],
            row.get("ran_rewritten", ""), f"{row.get('loops', '')} ({row.get('loops_plain', '')})",
            _num(row.get("planned_peak_plain_mb")), _num(row.get("planned_peak_mb")),
            row.get("limit_met", ""),
            f"{_num(row.get('search_peak_mb'))}, {row.get('candidates', '')}, "
            f"{row.get('xla_compiles', '')}",
            f"{_num(row.get('plain_time_s'))} [{_num(row.get('plain_time_min_s'))}-"
            f"{_num(row.get('plain_time_max_s'))}]",
            f"{_num(row.get('exla_time_s'))} [{_num(row.get('exla_time_min_s'))}-"
            f"{_num(row.get('exla_time_max_s'))}]",
            _num(row.get("ratio")), row.get("repeats", ""), _num(row.get("error")),
            row.get("load_avg", ""), row.get("run_id", "")]) + " |")
    return out + [""]
