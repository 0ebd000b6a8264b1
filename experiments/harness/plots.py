"""Matplotlib figures shared by the experiments (PNG, small)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_vs_size", "latest_rows", "series_label"]


def series_label(row: dict[str, str]) -> str:
    """``backend`` or ``backend (limit)``."""
    limit = row.get("limit") or ""
    return f"{row['backend']} ({limit})" if limit else row["backend"]


def latest_rows(rows: list[dict[str, str]], size_key: str) -> list[dict[str, str]]:
    """The newest row for each (backend, limit, size, other params) configuration."""
    keep: dict[tuple, dict[str, str]] = {}
    for row in rows:
        key = tuple((k, v) for k, v in sorted(row.items()) if k in
                    ("backend", "limit", size_key, "d", "k", "queries", "n", "m"))
        keep[key] = row  # later rows win
    return list(keep.values())


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def plot_vs_size(rows: list[dict[str, str]], size_key: str, metric: str, ylabel: str,
                 path: Path, title: str, logy: bool = True) -> Path:
    """One line per backend/limit of ``metric`` against ``size_key``; failures marked x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = latest_rows(rows, size_key)
    series: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        series.setdefault(series_label(row), []).append(row)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=90)
    ok_values = [_float(r.get(metric)) for r in rows if r.get("status") == "ok"]
    top = max([v for v in ok_values if v] or [1.0])
    for i, (label, items) in enumerate(sorted(series.items())):
        items.sort(key=lambda r: float(r[size_key]))
        good = [(float(r[size_key]), _float(r.get(metric))) for r in items if r["status"] == "ok"]
        good = [(s, v) for s, v in good if v is not None]
        color = f"C{i}"
        if good:
            ax.plot(*zip(*good), marker="o", color=color, label=label)
        for r in items:
            if r["status"] != "ok":
                ax.plot(float(r[size_key]), top * 1.5, marker="x", markersize=10, color=color,
                        linestyle="none")
                ax.annotate(r["status"], (float(r[size_key]), top * 1.5), color=color,
                            textcoords="offset points", xytext=(4, 4 + 9 * (i % 3)), fontsize=8)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(size_key)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
