"""exla.explain: what exla does to a function, reported without running it."""

from __future__ import annotations

import numpy as np
import pytest

from tests._frameworks import require

require("tensorflow", module_level=True)
import tensorflow as tf


@pytest.fixture(autouse=True)
def _clean_environment(extension, monkeypatch):
    for name in ("EXLA_FLAGS", "EXLA_STRICT", "EXLA_DUMP_TO", "EXLA_DISABLE", "XLA_FLAGS"):
        monkeypatch.delenv(name, raising=False)


def kernel_matvec(x, v):
    k = tf.exp(-tf.matmul(x, x, transpose_b=True))  # n x n: 8 MB at n = 1000
    return tf.linalg.matvec(k, v)


def _inputs(n=1000):
    rng = np.random.default_rng(0)
    return rng.random((n, 3)), rng.random(n)


def test_report_of_a_rewritten_program():
    import exla
    from exla.report import Report

    report = exla.explain(kernel_matvec, *_inputs(), threshold="100KB")
    assert isinstance(report, Report)
    assert report.rewritten and "tensor-splitter" in report.changed_passes
    assert report.largest_tensor_bytes_before == 8_000_000
    assert report.largest_tensor_bytes_after <= 100_000
    assert report.planned_temp_bytes_before >= 8_000_000
    assert report.planned_temp_bytes_after < report.planned_temp_bytes_before / 8
    assert report.hlo_before.startswith("HloModule") and " while(" in report.hlo_after
    assert " while(" not in report.hlo_before
    assert report.exla_seconds >= report.lowering_seconds + report.seconds > 0
    assert report.inputs == [((1000, 3), "float64"), ((1000,), "float64")]
    text = str(report)
    assert text.startswith("exla.explain(kernel_matvec) on ")
    for expected in ("runs the rewritten program", "tensor-splitter", "planned temp memory",
                     "largest tensor: 8 MB"):
        assert expected in text


def test_report_gives_the_memory_models_prediction():
    # The model's figure for the program before and after, next to XLA's own
    # plan of the same modules (constants included).
    import exla
    from exla.bridge import xla as bridge

    report = exla.explain(kernel_matvec, *_inputs(), threshold="100KB")
    before, after = report.predicted_peak_bytes
    assert (before, after) == (exla.predict_peak(report.hlo_before),
                               exla.predict_peak(report.hlo_after))
    planned_before = bridge.planned_memory(report.hlo_before).total_bytes
    assert planned_before <= before <= 1.1 * planned_before
    assert after < before / 8
    assert "predicted peak (exla's memory model): 8." in str(report)


def test_report_of_an_unchanged_program():
    import exla

    report = exla.explain(kernel_matvec, *_inputs(100))  # no threshold: nothing to do
    assert not report.rewritten and report.hlo_after == report.hlo_before
    assert report.conversion_seconds == 0.0
    assert "runs the original program" in str(report)


def test_explain_uses_the_functions_settings_and_accepts_specs():
    import exla

    f = exla.function(kernel_matvec, threshold="100KB")
    specs = (tf.TensorSpec([1000, 3], tf.float64), tf.TensorSpec([1000], tf.float64))
    report = f.explain(*specs)
    assert report.rewritten and report.threshold == 100_000
    assert exla.explain(f, *specs, threshold="100MB").rewritten is False


def test_explain_of_a_gradient_program_with_variables():
    import exla

    w = tf.Variable(tf.constant(0.5, tf.float64))
    steps = tf.Variable(0)

    def loss_and_grads(x, v):
        steps.assign_add(1)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(kernel_matvec(x, v) * w)
        return loss, tape.gradient(loss, [x, w])

    report = exla.explain(loss_and_grads, *_inputs(600), threshold="100KB")
    assert report.rewritten and "tensor-splitter" in report.changed_passes
    assert report.planned_temp_bytes_after < report.planned_temp_bytes_before
    assert int(steps.numpy()) == 0  # explained, not run


def nearest_distances(x, y):
    d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, -1)  # 400 x 300 x 32: 31 MB
    return tf.reduce_min(d, 1)


@pytest.mark.parametrize("how", ["keyword", "flag"])
def test_distance_expansion_only_with_fast_math(how, monkeypatch):
    import exla

    specs = (tf.TensorSpec([400, 32], tf.float64), tf.TensorSpec([300, 32], tf.float64))
    default = exla.explain(nearest_distances, *specs, threshold="1MB")
    assert "algebraic-rewriter" not in default.changed_passes
    assert any("fast_math=True" in message for _, message in default.messages)
    if how == "keyword":
        fast = exla.explain(nearest_distances, *specs, threshold="1MB", fast_math=True)
    else:
        monkeypatch.setenv("EXLA_FLAGS", "--exla_fast_math")
        fast = exla.explain(nearest_distances, *specs, threshold="1MB")
    assert "algebraic-rewriter" in fast.changed_passes
    assert " dot(" in fast.hlo_after


def test_plot_before_and_after_under_a_memory_limit(tmp_path):
    # The picture is drawn from the explanation's own HLO texts: the limit
    # in both panels, the rewritten program's curve under it, the original's
    # over it, and the kernel matrix named at the original's peak.
    require("matplotlib")
    import exla

    report = exla.explain(kernel_matvec, *_inputs(), memory_limit="2MB")
    path = tmp_path / "kmv.png"
    figure = report.plot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figure.get_suptitle() == "exla.explain(kernel_matvec)"
    artists = {a.get_gid(): a for ax in figure.axes for a in ax.get_children() if a.get_gid()}
    assert list(artists["memory-limit"].get_ydata()) == [2_000_000, 2_000_000]
    assert max(artists["live-after"].get_ydata()) <= 2_000_000 < max(artists["live-before"].get_ydata())
    names = artists["peak-names-before"].get_text().splitlines()[1]
    assert "f64[1000,1000]" in names and names.split()[0] + " = " in report.hlo_before


def test_plot_of_an_unchanged_program_has_one_panel():
    require("matplotlib")
    import exla

    figure = exla.explain(kernel_matvec, *_inputs(100)).plot()
    assert [ax.get_title(loc="left").split(":")[0] for ax in figure.axes] == ["program"]
    assert figure.get_suptitle().endswith("left unchanged")


def _sorted_sum(x):
    # Sorting all n*n values at once (TensorFlow sorts them with their
    # indices, a tuple): no rule slices a sort along the dimension it sorts,
    # so the 16 MB exponential it sorts stays whole.
    return tf.reduce_sum(tf.sort(tf.reshape(tf.exp(x[:, None] * x[None, :]), [-1]))[:10])


def test_memory_limit_report_and_error_give_the_floor_by_name():
    import exla
    from exla.bridge import xla

    x = np.linspace(0, 1, 2000, dtype=np.float32)
    report = exla.explain(_sorted_sum, x, memory_limit="64MB")
    found = report.limit_plan.floor
    plain = xla.planned_memory(report.hlo_before)
    assert (found.argument_bytes, found.output_bytes) == (
        plain.argument_bytes, plain.output_bytes - plain.alias_bytes) == (8000, 4)
    (exp,) = [u for u in found.unsplittable if u.opcode == "exponential"]
    assert exp.bytes == 16_000_000 == found.unsplittable_bytes and exp.shape == "f32[2000,2000]"
    # A lower bound on XLA's planned peak, of the plan and of the plain program.
    assert found.total_bytes <= min(report.limit_plan.peak_bytes, plain.total_bytes)
    assert found.headline() in str(report)
    with pytest.raises(exla.ExlaError, match=r"(?s)below the program's floor 16 MB .*\n  "
                                             r"unsplittable: \S+ \(exponential\) f32\[2000,2000\] "
                                             r"16 MB: "):
        exla.function(_sorted_sum, memory_limit="8MB", strict=True)(x)
