"""The experiments' figures: failures are marked inside the axes, once in the legend."""

from __future__ import annotations

import matplotlib
import pytest

from experiments.harness import plots

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _row(backend: str, n: int, status: str, time_s: str = "") -> dict[str, str]:
    return {"backend": backend, "limit": "", "n": str(n), "status": status, "time_s": time_s}


@pytest.fixture
def ax():
    fig, axis = plt.subplots()
    yield axis
    plt.close(fig)


def test_failures_get_one_legend_entry(ax) -> None:
    rows = [_row("exla", 10, "ok", "1.0"), _row("exla", 100, "ok", "10.0"),
            _row("tf", 10, "OOM"), _row("tf", 100, "OOM")]
    failed_at = plots._draw(ax, rows, "n", "time_s", {})
    assert failed_at == pytest.approx(15.0)  # 1.5 x the largest measured value
    assert sorted(ax.get_legend_handles_labels()[1]) == ["exla", "tf"]
    assert [t.get_text() for t in ax.texts] == ["OOM", "OOM"]


def test_no_failure_marker_when_everything_ran(ax) -> None:
    assert plots._draw(ax, [_row("tf", 10, "ok", "2.0")], "n", "time_s", {}) is None
    assert len(ax.texts) == 0


@pytest.mark.parametrize("logy", [True, False])
def test_failure_labels_stay_inside_the_axes(ax, logy: bool) -> None:
    rows = [_row("exla", n, "ok", str(n / 10)) for n in (10, 100, 1000)]
    rows += [_row("tf", 100, "OOM"), _row("tf", 1000, "TIMEOUT")]
    plots._panel(ax, rows, "n", "time_s", {}, logy)
    ax.figure.canvas.draw()
    inside = ax.get_window_extent()
    for text in ax.texts:
        box = text.get_window_extent()
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1, (text.get_text(), box, inside)


def test_a_memory_limit_is_its_own_series_and_old_rows_are_thresholds() -> None:
    old = {"backend": "exla", "limit": "3GB", "n": "10", "status": "ok", "time_s": "1"}
    threshold = dict(old, limit_kind="threshold", time_s="2")
    memory = dict(old, limit_kind="memory", time_s="3")
    assert plots.series_label(threshold) == plots.series_label(old) == "exla (3GB)"
    assert plots.series_label(memory) == "exla (memory_limit=3GB)"
    # A row written before limit_kind existed is the same configuration as a
    # new threshold row (the newer wins), not as a memory-limit row.
    kept = plots.latest_rows([old, threshold, memory], "n")
    assert sorted(r["time_s"] for r in kept) == ["2", "3"]
