"""The memory picture (exla/_plot.py, exla.predict.plot_memory): what it draws, from real modules."""

from __future__ import annotations

import re

import pytest

from tests._frameworks import require

require("matplotlib", module_level=True)

pytestmark = pytest.mark.usefixtures("extension")

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def kmv_split(kmv_hlo):
    """The kernel matvec at n = 1000 (a 4 MB kernel matrix) and its rewrite under 1 MB."""
    import exla

    before = kmv_hlo(1000)
    after, report = exla.optimize_hlo(before, threshold="1MB")
    assert report.rewrote_program
    return before, after


@pytest.fixture(scope="module")
def figure(kmv_split):
    from exla.predict import plot_memory

    before, after = kmv_split
    return plot_memory(before, after, memory_limit="3MB", title="kmv")


def _artist(figure, gid):
    found = [a for ax in figure.axes for a in ax.get_children() if a.get_gid() == gid]
    assert found, f"no artist {gid!r} in the figure"
    return found


def _instruction_names(hlo: str) -> set[str]:
    return set(re.findall(r"^\s*(?:ROOT )?([\w.\-]+) = ", hlo, re.M))


def test_png_is_written_and_is_an_image(kmv_split, tmp_path):
    import matplotlib.image
    from exla.predict import plot_memory

    path = tmp_path / "memory.png"
    plot_memory(*kmv_split, memory_limit="3MB", path=str(path))
    assert path.read_bytes()[:8] == _PNG_SIGNATURE
    pixels = matplotlib.image.imread(str(path))
    height, width = pixels.shape[:2]
    assert width >= 800 and height >= 600
    assert pixels[..., :3].std() > 0.05  # not a blank canvas


def test_limit_line_at_the_limit_in_every_panel(figure):
    lines = _artist(figure, "memory-limit")
    assert len(lines) == 2
    for line in lines:
        assert list(line.get_ydata()) == [3_000_000, 3_000_000]


def test_no_limit_line_without_a_limit(kmv_split):
    from exla.predict import plot_memory

    figure = plot_memory(kmv_split[0])
    assert not [a for ax in figure.axes for a in ax.get_children() if a.get_gid() == "memory-limit"]
    assert [ax.get_title(loc="left").split(":")[0] for ax in figure.axes] == ["program"]


def test_curve_is_the_baseline_plus_the_timeline(kmv_split, figure):
    from exla.predict import predict_memory

    (curve,) = _artist(figure, "live-before")
    held = list(curve.get_ydata())
    p = predict_memory(kmv_split[0])
    baseline = p.argument_bytes + p.output_bytes + p.constant_bytes
    assert min(held) == baseline
    assert max(held) == baseline + p.live_bytes == baseline + 4_000_000
    (planned,) = _artist(figure, "planned-peak-before")
    assert planned.get_ydata()[0] == p.peak_bytes >= max(held)


def test_named_tensors_are_the_instructions_alive_at_the_peak(kmv_split, figure):
    before, after = kmv_split
    (box,) = _artist(figure, "peak-names-before")
    lines = box.get_text().splitlines()
    assert lines[0].startswith("peak at step ")
    # The one temporary before exla: the 1000 x 1000 kernel matrix.
    assert lines[1].split()[:3] == ["k", "4", "MB"] and "f32[1000,1000]" in lines[1]
    (box,) = _artist(figure, "peak-names-after")
    named = [line.split()[0] for line in box.get_text().splitlines()[1:]]
    assert named and set(named) <= _instruction_names(after)
    # The largest at the split program's peak is a slice of the kernel matrix
    # in the loop body, below the 1 MB threshold.
    first = box.get_text().splitlines()[1]
    assert "split_body" in first and re.search(r"f32\[\d+,1000\]", first)


def test_after_peak_is_below_before_peak_and_the_limit(figure):
    (before,) = _artist(figure, "live-before")
    (after,) = _artist(figure, "live-after")
    assert max(after.get_ydata()) < 3_000_000 < max(before.get_ydata())
    (planned,) = _artist(figure, "planned-peak-after")
    assert planned.get_ydata()[0] < 3_000_000


def test_axis_is_in_decimal_units(figure):
    before, after = figure.axes[:2]
    assert before.get_ylabel() == "memory (MB)"
    ticks = [t.get_text() for t in before.get_yticklabels()]
    assert "4" in ticks  # 4,000,000 bytes is written 4


def test_peak_description_names_loop_bodies_but_not_the_entry(kmv_split):
    from exla._plot import peak_description
    from exla.predict import predict_timeline

    before, after = kmv_split
    assert " in " not in peak_description(predict_timeline(before))
    assert " in kv.split_body" in peak_description(predict_timeline(after))


def test_bad_picture_format_is_a_value_error(kmv_split, tmp_path):
    from exla.predict import plot_memory

    with pytest.raises(ValueError, match="nosuchformat"):
        plot_memory(kmv_split[0], path=str(tmp_path / "memory.nosuchformat"))
