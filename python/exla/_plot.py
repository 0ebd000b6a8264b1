"""The picture of a program's memory over its schedule, before and after exla.

A table says how much memory a program plans; a profile says when and why:
which step holds the most, which tensors those bytes are, and how far the
rewrite brought it below the limit. Everything here is drawn from the memory
model's timeline (:func:`exla.predict.predict_timeline`), so nothing is
compiled. matplotlib is imported only when a picture is drawn (importing exla
must stay cheap), and only its object API is used: no pyplot, so no window
opens, no backend is chosen for the user and no figure is kept globally.

Each module gets its own panel over its own steps (a rewrite changes the
number of steps, and a split loop's body is one iteration), with the same
memory limit line in both so that the two scales can be compared by eye.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Sequence

from exla._timeline import predict_timeline
from exla._values import format_size, parse_size

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from exla._exla import MemoryTimeline

__all__ = ["plot_programs", "plot_timelines", "peak_description", "NAMED_AT_PEAK"]

_log = logging.getLogger("exla")

# Tensors named at each peak: more make the box cover the curve.
NAMED_AT_PEAK = 3
_COLORS = {"before": "#1f77b4", "after": "#2ca02c", "program": "#1f77b4"}
_LIMIT_COLOR = "#d62728"
_BASELINE_COLOR = "0.85"
# Head room above the highest line, for the box that names the peak.
_HEADROOM = 1.5
_X_LABEL = "step of XLA CPU's schedule (exla's memory model; a loop body is one iteration)"
# The planned peak is the packed heap, which gaps between buffers can put
# above the most bytes ever alive together: the label says so.
_PLANNED = "predicted planned peak (packed heap)"


def plot_programs(before: str, after: str | None = None, *, memory_limit: int | str | None = None,
                  title: str | None = None, path: str | None = None) -> "Figure":
    """Timelines of ``before`` (and ``after``) drawn by :func:`plot_timelines`."""
    limit = None if memory_limit is None else parse_size(memory_limit)
    if after is None:
        panels = [("program", "program", predict_timeline(before, NAMED_AT_PEAK))]
    else:
        panels = [("before", "before exla", predict_timeline(before, NAMED_AT_PEAK)),
                  ("after", "after exla", predict_timeline(after, NAMED_AT_PEAK))]
    return plot_timelines(panels, memory_limit=limit, title=title, path=path)


def plot_timelines(panels: Sequence[tuple[str, str, MemoryTimeline]], *, memory_limit: int | None,
                   title: str | None, path: str | None) -> "Figure":
    """One panel per ``(key, label, timeline)``; ``key`` names its lines' gids
    (``live-<key>``, ``planned-peak-<key>``, ``peak-names-<key>``) for tests and tools."""
    figure_class = _figure_class()
    figure = figure_class(figsize=(10, 1.2 + 3.3 * len(panels)), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (key, label, timeline) in zip(axes, panels):
        _draw_panel(ax, key, label, timeline, memory_limit)
    if title:
        figure.suptitle(title, fontsize=12)
    handles, labels = _legend_entries(axes)
    # Below the panels, where constrained layout makes room for it: inside
    # one it would cover a curve or the names at a peak.
    figure.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    figure.get_layout_engine().set(h_pad=0.12)
    if path is not None:
        figure.savefig(path, dpi=120)
        _log.info("wrote the memory timeline to %s", path)
    return figure


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure  # on first picture: importing exla stays cheap
    except ImportError as e:
        raise ImportError(f"drawing memory needs matplotlib (pip install matplotlib): {e}") from e
    return Figure


def _draw_panel(ax: "Axes", key: str, label: str, t: MemoryTimeline, limit: int | None) -> None:
    """The live curve, the baseline, the planned peak, the limit and the named peak."""
    color = _COLORS.get(key, "#1f77b4")
    xs, held = _stairs(t.total_bytes)
    ax.fill_between(xs, 0, t.baseline_bytes, color=_BASELINE_COLOR, lw=0,
                    label="arguments + outputs + constants")
    ax.fill_between(xs, t.baseline_bytes, held, color=color, alpha=0.15, lw=0)
    ax.plot(xs, held, color=color, lw=1.6, gid=f"live-{key}", label=f"{label}: memory held")
    ax.axhline(t.peak_bytes, color=color, ls=":", lw=1.2, gid=f"planned-peak-{key}",
               label=f"{label}: {_PLANNED} {format_size(t.peak_bytes)}")
    if limit is not None:
        ax.axhline(limit, color=_LIMIT_COLOR, ls="--", lw=1.4, gid="memory-limit",
                   label=f"memory limit {format_size(limit)}")
    top = max(t.peak_bytes, limit or 0, 1) * _HEADROOM
    ax.set_ylim(0, top)
    ax.set_xlim(-0.5, t.steps - 0.5)  # each step a bar of width 1 centred on it
    _format_bytes_axis(ax, top)
    ax.set_xlabel(_X_LABEL, fontsize=9)
    ax.set_title(f"{label}: {t.steps - 1} steps, most held {format_size(max(t.total_bytes))}",
                 loc="left", fontsize=10)
    ax.grid(axis="y", color="0.9", lw=0.6)
    _name_peak(ax, key, t, color)


def _stairs(values: Sequence[int]) -> tuple[list[float], list[int]]:
    """A step curve as plain points: step s is a bar from s - 0.5 to s + 0.5
    (a line, unlike ``Axes.stairs``, so its data are the bytes themselves)."""
    xs: list[float] = []
    ys: list[int] = []
    for step, value in enumerate(values):
        xs += [step - 0.5, step + 0.5]
        ys += [value, value]
    return xs, ys


def _format_bytes_axis(ax: "Axes", top: float) -> None:
    """Ticks in one decimal unit chosen from the axis's range (the data stay bytes)."""
    from matplotlib.ticker import FuncFormatter  # loaded by _figure_class already

    unit, scale = next(((u, s) for u, s in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)) if top >= 2 * s),
                       ("B", 1.0))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / scale:g}"))
    ax.set_ylabel(f"memory ({unit})")


def peak_description(t: MemoryTimeline) -> str:
    """The text naming the largest tensors at a timeline's first peak: one line
    per buffer, its instruction first (a loop body's computation after it)."""
    step = t.peak_steps[0]
    lines = [f"peak at step {step} ({t.instructions[step] or 'start'}), largest live:"]
    width = max((len(b.instruction) for b in t.peak_buffers), default=0)
    for b in t.peak_buffers:
        what = b.shape if b.kind == "value" else b.kind
        where = "" if b.computation in ("", t.entry) else f"  in {b.computation}"
        lines.append(f"{b.instruction:<{width}}  {format_size(b.bytes):>7}  {what}{where}")
    return "\n".join(lines)


def _name_peak(ax: "Axes", key: str, t: MemoryTimeline, color: str) -> None:
    """A marker on the first peak and a box that names its largest tensors, on
    the side of the panel away from the peak so that the box does not hide it."""
    if not t.peak_buffers:
        return
    step = t.peak_steps[0]
    held = t.total_bytes[step]
    ax.plot([step], [held], "o", color=color, ms=5, gid=f"peak-marker-{key}")
    right_half = step > (t.steps - 1) / 2
    ax.annotate(peak_description(t), xy=(step, held), xycoords="data",
                xytext=(0.02 if right_half else 0.98, 0.96), textcoords="axes fraction",
                ha="left" if right_half else "right", va="top", multialignment="left",
                fontsize=8, family="monospace",
                bbox={"boxstyle": "round,pad=0.4", "fc": "white", "ec": color, "alpha": 0.95},
                arrowprops={"arrowstyle": "->", "color": color, "lw": 1.0},
                gid=f"peak-names-{key}")


def _legend_entries(axes: Sequence["Axes"]) -> tuple[list, list[str]]:
    """Every panel's entries once (the baseline and the limit appear in each)."""
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels
