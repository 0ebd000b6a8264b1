"""exla.predict.predict_timeline (exla/_timeline.py): the memory model's live bytes per step."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("extension")


@pytest.mark.parametrize("threshold", [None, "1MB", "100KB"])
def test_timeline_agrees_with_the_prediction(kmv_hlo, threshold):
    import exla
    from exla.predict import predict_memory, predict_timeline

    text = kmv_hlo(1000)
    if threshold is not None:
        text, _ = exla.optimize_hlo(text, threshold=threshold)
    t = predict_timeline(text)
    p = predict_memory(text)
    assert max(t.live_bytes) == t.live_peak_bytes == p.live_bytes
    assert t.temp_bytes == p.temp_bytes >= t.live_peak_bytes
    assert t.peak_bytes == t.baseline_bytes + t.temp_bytes == p.peak_bytes
    assert t.baseline_bytes == p.argument_bytes + p.output_bytes - p.alias_bytes + p.constant_bytes
    assert [s for s, b in enumerate(t.live_bytes) if b == p.live_bytes] == list(t.peak_steps)
    assert len(t.instructions) == t.steps and t.instructions[0] == ""


def test_split_loop_body_is_on_the_schedule(kmv_hlo):
    import exla
    from exla.predict import predict_timeline

    text, _ = exla.optimize_hlo(kmv_hlo(1000), threshold="1MB")
    t = predict_timeline(text, max_named=2)
    assert t.instructions.count("while") == 2  # where the loop starts and where it returns
    start, end = t.instructions.index("while"), len(t.instructions) - 1 - t.instructions[::-1].index("while")
    assert start < t.peak_steps[0] < end  # the slices are alive inside the loop
    assert len(t.peak_buffers) == 2
    assert t.peak_buffers[0].bytes >= t.peak_buffers[1].bytes
    assert t.peak_buffers[0].computation != t.entry


def test_malformed_module_is_a_value_error():
    from exla.predict import predict_timeline

    with pytest.raises(ValueError, match="line"):
        predict_timeline("HloModule m\n\nENTRY e {\n  ROOT x = f32[2 parameter(0)\n}")
