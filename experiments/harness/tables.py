"""Result rows as Markdown: tables, headline lines and the numbers in them.

What RESULTS.md (:mod:`experiments.report`) and the workloads' own sections
are written with.
"""

from __future__ import annotations

from typing import Any, Sequence

from experiments.harness.plots import group_of, latest_rows, series_label

__all__ = ["OLD_PLANNED", "number", "credit", "headlines", "results_table"]

_COLUMNS = [("status", "status"), ("ran_rewritten", "exla's program ran"),
            ("loops", "loops (plain)"), ("time_s", "time (s)"), ("time_min_s", "min-max (s)"),
            ("repeats", "timed calls"), ("first_call_s", "first call (s)"),
            ("peak_rss_mb", "peak RSS (MiB)"), ("planned_temp_mb", "XLA planned temp (MiB)"),
            ("planned_peak_mb", "XLA planned peak (MiB)"), ("error", "rel. error"),
            ("load_avg", "load")]
# Rows written before the harness read the executable that ran: their planned
# figures came from a separate optimize_hlo call, and nothing says whether
# exla's program is what ran.
OLD_PLANNED = "†"


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
        return f"{number(row['time_min_s'])}-{number(row.get('time_max_s'))}"
    if key in ("repeats", "load_avg"):
        return row.get(key, "") if row.get("time_s") or key == "load_avg" else ""
    if key in ("planned_temp_mb", "planned_peak_mb") and row.get(key):
        old = row.get("planned_from") != "executable"
        return number(row.get(key)) + (OLD_PLANNED if old else "")
    return number(row.get(key))


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


def number(value: Any, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits; '' for nothing or NaN.

    >>> number(1234.5), number(''), number('OOM')
    ('1.23e+03', '', 'OOM')
    """
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


def results_table(rows: list[dict[str, str]], size_key: str, params: list[str],
           metrics: list[str]) -> list[str]:
    """One row per configuration (its newest), sorted by parameters and size."""
    rows = sorted(latest_rows(rows, size_key, params),
                  key=lambda r: ([_sort_key(r.get(p, "")) for p in params[1:]],
                                 float(r[size_key]), series_label(r)))
    head = ["backend"] + params + [c[1] for c in _COLUMNS] + metrics
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [series_label(r)] + [r.get(p, "") for p in params]
        cells += [_cell(r, k) for k, _ in _COLUMNS]
        cells += [number(r.get(m)) for m in metrics]
        out.append("| " + " | ".join(cells) + " |")
    return out
