"""optimize_hlo, Report and the package surface (needs the C++ extension)."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

import exla
from exla import Report, optimize_hlo
from exla.options import Options
from exla.report import PassRecord

pytestmark = pytest.mark.usefixtures("extension")

MALFORMED = "HloModule m\n\nENTRY e {\n  p = f32[2 parameter(0)\n}\n"


@pytest.fixture(scope="module")
def kmv(kmv_hlo):
    return kmv_hlo(1000)  # a 4 MB kernel matrix


def test_threshold_splits_and_keeps_numbers(kmv):
    text, report = optimize_hlo(kmv, threshold="1MB", planned_memory=True)
    assert isinstance(report, Report)
    assert "tensor-splitter" in report.changed_passes
    assert report.largest_tensor_bytes_before == 1000 * 1000 * 4
    assert "f32[1000,1000]" in report.largest_tensor_before
    assert 0 < report.largest_tensor_bytes_after <= 1_000_000
    assert report.within_threshold is True
    assert " while(" in text
    assert report.instructions_before == 5 < report.instructions_after
    # XLA's own plan: the 4 MB temporary is gone.
    assert report.planned_temp_bytes_before >= 4_000_000
    assert report.planned_temp_bytes_after <= 1_000_000

    from exla.bridge.tensorflow_call import call_hlo

    rng = np.random.default_rng(1)
    x = (rng.normal(size=(1000, 8)) * 0.1).astype(np.float32)
    v = rng.normal(size=(1000, 1)).astype(np.float32)
    (expected,) = call_hlo(kmv, [x, v])
    (actual,) = call_hlo(text, [x, v])
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_bytes_proto_input_gives_the_same_result(kmv):
    from exla.bridge import xla as bridge

    proto = bridge.text_to_proto(kmv)
    from_text, _ = optimize_hlo(bridge.proto_to_text(proto), threshold=10**6)
    from_proto, report = optimize_hlo(proto, threshold=10**6)
    assert from_proto == from_text
    assert report.largest_tensor_bytes_after <= 10**6
    # Text given as bytes is taken as text.
    assert optimize_hlo(kmv.encode(), threshold=10**6)[0] == optimize_hlo(kmv, threshold=10**6)[0]


def test_unchanged_module_is_returned_as_given(kmv):
    text, report = optimize_hlo(kmv, passes=["dce"])
    assert text is kmv
    assert report.passes == [PassRecord("dce", False, report.passes[0].seconds)]
    assert report.changed_passes == [] and not report.changed
    assert report.planned_temp_bytes_before is None
    assert report.within_threshold is None


def test_no_threshold_splits_nothing(kmv):
    text, report = optimize_hlo(kmv)
    assert "tensor-splitter" not in report.changed_passes
    assert report.largest_tensor_bytes_after == report.largest_tensor_bytes_before


def test_disabled_passes(kmv):
    _, report = optimize_hlo(kmv, threshold="1MB", disabled_passes=["tensor-splitter", "algsimp"])
    names = [p.name for p in report.passes]
    assert "tensor-splitter" not in names and "dce" in names
    assert report.largest_tensor_bytes_after == 4_000_000
    text, report = optimize_hlo(kmv, passes=["dce"], disabled_passes=["dce"])
    assert report.passes == [] and text is kmv


def test_dump_dir(kmv, tmp_path):
    dump = tmp_path / "dump"
    optimize_hlo(kmv, threshold="1MB", dump_dir=dump)
    files = sorted(p.name for p in dump.iterdir())
    assert len(files) >= 2
    assert any("tensor-splitter" in name for name in files)


@pytest.mark.parametrize("kwargs, match", [
    (dict(hlo=MALFORMED), r"line \d+, column \d+"),
    (dict(hlo="HloModule m\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n", passes=["no-such-pass"]),
     "no-such-pass.*tensor-splitter"),
    (dict(hlo="HloModule m\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n", threshold="1 furlong"),
     "'1 furlong'.*threshold"),
    (dict(hlo=b"\x08\x01garbage"), "HloModuleProto"),
])
def test_bad_input_raises_value_error(kwargs, match):
    hlo = kwargs.pop("hlo")
    with pytest.raises(ValueError, match=match):
        optimize_hlo(hlo, **kwargs)


def test_report_str_and_dict(kmv):
    _, report = optimize_hlo(kmv, threshold="1MB", planned_memory=True)
    text = str(report)
    assert "tensor-splitter" in text and "changed" in text
    assert "4 MB" in text and "threshold 1 MB" in text
    assert "planned temp memory" in text
    data = json.loads(json.dumps(report.to_dict()))
    assert data["changed_passes"] == report.changed_passes
    assert data["passes"][0].keys() == {"name", "changed", "seconds"}
    assert data["planned_temp_bytes_before"] == report.planned_temp_bytes_before


def test_report_formatting_without_extension_values():
    report = Report(passes=[PassRecord("a", True, 0.002), PassRecord("b", False, 1e-6)],
                    largest_tensor_bytes_before=28_800_000_000, largest_tensor_bytes_after=80_000_000,
                    planned_temp_bytes_before=28_800_000_000, planned_temp_bytes_after=160_000_000)
    text = str(report)
    assert "28.8 GB" in text and "80 MB" in text and "160 MB" in text
    assert report.changed_passes == ["a"]


@pytest.mark.parametrize("module", ["exla", "exla.options", "exla.optimize", "exla.errors", "exla.report",
                                    "exla._core", "exla._hlo_signature", "exla.memory_cap",
                                    "exla.tensorflow.program_info", "exla.explanation",
                                    "exla.tensorflow.exla_function",
                                    "exla.bridge.tensorflow_call", "exla.explain",
                                    "exla._collectives", "exla._setting", "exla._entry_settings",
                                    "exla.tensorflow.fallback", "exla._splitter_result",
                                    "exla._timeline"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_import_is_light(subprocess_env):
    # Nor exla's own extension: its record classes are looked up on first use
    # (exla._core.records), so that exla imports where it is not built.
    code = ("import sys, exla; heavy = [m for m in ('tensorflow', 'jax', 'jaxlib', 'matplotlib', "
            "'exla._exla') if m in sys.modules]; print(exla.__version__, heavy)")
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.1.0", "[]"]
    assert set(exla.__all__) >= {"optimize_hlo", "parse_size", "Options", "Report", "__version__"}


def test_threshold_beyond_int64_is_a_precise_value_error(kmv):
    with pytest.raises(ValueError, match=r"invalid size .* for threshold: larger than 2\*\*63") as info:
        optimize_hlo(kmv, threshold=2**70)
    assert "HloModule" not in str(info.value)


def test_core_failures_are_value_errors_or_exla_errors(kmv):
    from exla import _core

    with pytest.raises(ValueError, match="line 1, column 1"):
        _core.round_trip("not hlo")
    with pytest.raises(ValueError, match="unknown pass"):
        _core.optimize(kmv, Options(passes=["no-such-pass"]))
    # A value the C++ options cannot take (Options does not check its own
    # fields' types): internal, and the module text pybind11 puts into its
    # TypeError stays out of the message.
    with pytest.raises(exla.ExlaError, match=r"internal error in exla's C\+\+ core \(optimize\)") as info:
        _core.optimize(kmv, Options(fast_math="yes"))
    assert "HloModule" not in str(info.value) and "Invoked with" not in str(info.value)


def test_sharded_module_is_measured_per_device():
    # exp(X Xᵀ) v, X cut by rows over 8 devices: 1 MB of kernel in all,
    # 128 KB on each device; under a 256 KB threshold there is nothing to split.
    from tests.python.bridge.test_xla import SHARDED_KMV

    text, report = optimize_hlo(SHARDED_KMV, threshold="256KB")
    assert report.devices == 8
    assert report.largest_tensor_bytes_before == 512 * 512 * 4 // 8
    assert not report.changed and text == SHARDED_KMV
    assert "largest tensor per device (8 devices)" in str(report)
    # Under 64 KB it splits the columns, which every device holds whole.
    text, report = optimize_hlo(SHARDED_KMV, threshold="64KB", strict=True)
    assert report.largest_tensor_bytes_after <= 64_000
    assert " while(" in text
    assert [(loop.dimension, loop.extent) for loop in report.split_loops] == [(1, 512)]


def test_what_the_splitter_leaves_whole_is_reported_as_data():
    # Every row of e feeds a sort of that row, which needs it whole, and the
    # sort is the result, too large to be split: the report names both with
    # the splitter's reasons, as fields.
    hlo = ("HloModule m\n\nless {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT l = pred[] compare(a, b), direction=LT\n}\n\nENTRY main {\n"
           "  x = f32[64,64] parameter(0)\n  e = f32[64,64] exponential(x)\n"
           "  ROOT s = f32[64,64] sort(e), dimensions={1}, to_apply=less\n}\n")
    _, report = optimize_hlo(hlo, threshold="1KB", strict=False)
    assert [(t.where, t.bytes) for t in report.unsplit] == [("main/e", 16384), ("main/s", 16384)]
    assert "(sort) cannot consume slices" in report.unsplit[0].reason
    assert "the computation's result" in report.unsplit[1].reason
