"""Matplotlib figures shared by the experiments (PNG, small)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

__all__ = ["plot_vs_size", "memory_and_time", "latest_rows", "series_label", "group_of"]

# Columns that tell configurations apart (besides backend and limit); an
# experiment's own parameters are added by the callers that know them.
_CONFIG_KEYS = ("d", "k", "queries", "n", "m", "metric", "dataset", "seq", "hidden")


def series_label(row: dict[str, str]) -> str:
    """``backend``, ``backend (threshold)`` or ``backend (memory_limit=SIZE)``.

    >>> series_label({"backend": "exla", "limit": "200MB"})
    'exla (200MB)'
    >>> series_label({"backend": "exla", "limit": "3GB", "limit_kind": "memory"})
    'exla (memory_limit=3GB)'
    """
    limit = row.get("limit") or ""
    if not limit:
        return row["backend"]
    return f"{row['backend']} ({'memory_limit=' if _limit_kind(row) == 'memory' else ''}{limit})"


def _limit_kind(row: dict[str, str]) -> str:
    # Rows written before the column existed used thresholds only.
    return (row.get("limit_kind") or "threshold") if row.get("limit") else ""


def group_of(row: dict[str, str], keys: Sequence[str]) -> str:
    """``key=value, ...`` for the columns that split a figure into panels ('' for none)."""
    return ", ".join(f"{k}={row.get(k, '')}" for k in keys)


def latest_rows(rows: list[dict[str, str]], size_key: str,
                params: Sequence[str] = ()) -> list[dict[str, str]]:
    """The newest row for each (backend, limit, size, other params) configuration."""
    names = {"backend", "limit", size_key, *_CONFIG_KEYS, *params}
    keep: dict[tuple, dict[str, str]] = {}
    for row in rows:
        key = tuple((k, v) for k, v in sorted(row.items()) if k in names) + (_limit_kind(row),)
        keep[key] = row  # later rows win
    return list(keep.values())


def _order(value: Any) -> tuple:
    """Sort key: numbers in numeric order, before text."""
    number = _float(value)
    return (0, number, "") if number is not None else (1, 0.0, str(value))


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def _draw(ax: Any, rows: list[dict[str, str]], size_key: str, metric: str,
          colors: dict) -> float | None:
    """Draws one panel; returns the height of the failure markers (None if none failed)."""
    series: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        series.setdefault(series_label(row), []).append(row)
    ok_values = [_float(r.get(metric)) for r in rows if r.get("status") == "ok"]
    # Failures are marked just above the highest measured value.
    marker_y = max([v for v in ok_values if v] or [1.0]) * 1.5
    any_failed = False
    for i, (label, items) in enumerate(sorted(series.items())):
        items.sort(key=lambda r: float(r[size_key]))
        good = [(float(r[size_key]), _float(r.get(metric))) for r in items if r["status"] == "ok"]
        good = [(s, v) for s, v in good if v is not None]
        color = colors.setdefault(label, f"C{len(colors)}")
        if good:
            ax.plot(*zip(*good), marker="o", color=color, label=label)
        # exla rows where exla changed nothing: plain XLA's program ran (open markers).
        same = [(float(r[size_key]), _float(r.get(metric))) for r in items
                if r["status"] == "ok" and r.get("ran_rewritten") == "no"]
        same = [(s, v) for s, v in same if v is not None]
        if same:
            ax.plot(*zip(*same), marker="o", markersize=9, markerfacecolor="white", color=color,
                    linestyle="none", label=f"{label}: exla changed nothing")
        failures = [r for r in items if r["status"] != "ok"]
        any_failed = any_failed or bool(failures)
        for j, r in enumerate(failures):
            # A series that never ran gets its legend entry from its first failure only.
            ax.plot(float(r[size_key]), marker_y, marker="x", markersize=10, color=color,
                    linestyle="none", label=label if not good and j == 0 else None)
            ax.annotate(r["status"], (float(r[size_key]), marker_y), color=color,
                        textcoords="offset points", xytext=(4, 4 + 9 * (i % 3)), fontsize=8)
    return marker_y if any_failed else None


def _panel(ax: Any, rows: list[dict[str, str]], size_key: str, metric: str, colors: dict,
           logy: bool) -> None:
    """One panel on log-scaled sizes, with head-room above the failure markers so their
    labels stay inside the axes, clear of the title."""
    failed_at = _draw(ax, rows, size_key, metric, colors)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if failed_at is not None:
        ax.set_ylim(top=failed_at * 3 if logy else failed_at * 1.2)


def plot_vs_size(rows: list[dict[str, str]], size_key: str, metric: str, ylabel: str,
                 path: Path, title: str, logy: bool = True, groups: Sequence[str] = (),
                 params: Sequence[str] = ()) -> Path:
    """One line per backend/limit of ``metric`` against ``size_key``; failures marked x.

    ``groups`` names columns (e.g. ``d``, ``metric``) whose values get a panel each.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = latest_rows(rows, size_key, params)
    panels: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        panels.setdefault(group_of(row, groups), []).append(row)
    names = sorted(panels, key=lambda g: [_order(panels[g][0].get(k, "")) for k in groups])
    cols = min(3, len(names)) or 1
    nrows = (len(names) + cols - 1) // cols or 1
    fig, axes = plt.subplots(nrows, cols, figsize=(5.4 * cols, 3.9 * nrows), dpi=80,
                             squeeze=False)
    colors: dict[str, str] = {}
    for ax, name in zip(axes.flat, names):
        _panel(ax, panels[name], size_key, metric, colors, logy)
        ax.set_xlabel(size_key)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}\n{name}" if name else title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def memory_and_time(rows: list[dict[str, str]], results_dir: Path, name: str, size_key: str,
                    title: str, time_label: str, groups: Sequence[str] = (),
                    params: Sequence[str] = ()) -> list[Path]:
    """An experiment's two figures: peak RSS and time against its size (``NAME_memory.png``,
    ``NAME_time.png``), failures marked."""
    return [
        plot_vs_size(rows, size_key, "peak_rss_mb", "peak RSS of the process (MiB)",
                     results_dir / f"{name}_memory.png", f"{title}: peak memory",
                     groups=groups, params=params),
        plot_vs_size(rows, size_key, "time_s", time_label, results_dir / f"{name}_time.png",
                     f"{title}: time", groups=groups, params=params),
    ]
