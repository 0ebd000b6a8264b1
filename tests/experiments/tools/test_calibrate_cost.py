"""calibrate_cost: its fits on figures made up for the purpose (the
experiment itself measures them), and the header it wrote
(cc/model/cost/cost_constants.h) against its own figures."""

from __future__ import annotations

import math
import os

import pytest

from experiments.tools import calibrate_cost


@pytest.mark.parametrize("exponent", [0.0, 0.19, 0.5])
def test_thin_fit_recovers_the_power_rates_were_made_with(exponent):
    full = 1e11
    rates = {shape: full * (min(shape) / 1024) ** exponent
             for shape in calibrate_cost.thin_shapes()}
    fitted = calibrate_cost.fit_thin(rates, full)
    assert fitted["dot_thin_width"] == 1024
    assert math.isclose(fitted["dot_thin_exponent"], exponent, abs_tol=1e-9)


def test_thin_fit_of_rates_above_the_full_one_is_no_penalty():
    rates = {shape: 2e11 for shape in calibrate_cost.thin_shapes()}
    assert calibrate_cost.fit_thin(rates, 1e11)["dot_thin_exponent"] == 0.0


@pytest.mark.parametrize("trip, op", [(2e-7, 1.5e-6), (1e-9, 3e-6)])
def test_loop_fit_recovers_the_overheads(trip, op):
    per_trip = {kernels: trip + kernels * op for kernels in (1, 2, 4, 8)}
    fitted = calibrate_cost.fit_loop(per_trip)
    assert math.isclose(fitted["trip_seconds"], trip, rel_tol=1e-6, abs_tol=1e-15)
    assert math.isclose(fitted["op_seconds"], op, rel_tol=1e-9)


def test_loop_fit_refuses_a_trip_it_cannot_resolve():
    # The figures that once gave trip_seconds = 0 (a trip of 1.19 us with
    # one product, 1.79 us a product): said, not clamped.
    with pytest.raises(calibrate_cost.CalibrationError, match="does not resolve the trip"):
        calibrate_cost.fit_loop({1: 1.19e-6, 8: 13.69e-6})


_L2, _L1 = 2 << 20, 48 << 10


def _copy_times(extra: dict[tuple[int, ...], float]) -> dict[str, float]:
    """Products of 1 ms without their copy, 1 ms plus ``extra`` with it."""
    seconds = {}
    for shape in calibrate_cost.COPY_SHAPES:
        name = "x".join(map(str, shape))
        seconds[f"plain_dot_{name}"] = 1e-3
        seconds[f"copy_dot_{name}"] = 1e-3 + extra[shape]
    return seconds


def test_copies_that_stay_cached_differ_in_shape_not_in_size():
    # The model's verdicts on the calibration's copies: of the 16 MB ones,
    # 64 long rows stay cached, rows of 512 or 1,024 elements miss; 8 MB of
    # 1 MB blocks of thin rows stay cached.
    verdicts = {shape: calibrate_cost.copy_stays_cached(shape, _L2, _L1)
                for shape in calibrate_cost.COPY_SHAPES}
    assert verdicts == {(256, 32, 32): True, (8, 8192, 2, 16): True, (64, 256, 256): True,
                        (4096, 32, 32): False, (8192, 16, 32): False, (1024, 64, 64): False}


def test_transpose_rates_are_the_copies_bytes_over_the_extra_time():
    # Copies made at 6 GB/s where they stay cached and 1 GB/s where they
    # miss (read plus write): each class's bytes over its seconds.
    extra = {shape: 2 * 4 * math.prod(shape) / (6e9 if cached else 1e9)
             for shape, cached in zip(calibrate_cost.COPY_SHAPES,
                                      (True, True, True, False, False, False))}
    rates = calibrate_cost.transpose_rates(_copy_times(extra), _L2, _L1)
    assert rates["transpose_cache_bytes"] == _L2
    assert rates["transpose_lines_cache_bytes"] == _L1
    assert math.isclose(rates["transpose_cached_bytes_per_second"], 6e9)
    assert math.isclose(rates["transpose_bytes_per_second"], 1e9)


def test_transpose_fit_refuses_a_copy_it_cannot_resolve():
    extra = {shape: 1e-3 for shape in calibrate_cost.COPY_SHAPES}
    extra[(256, 32, 32)] = -1e-5
    with pytest.raises(calibrate_cost.CalibrationError, match="256x32x32 operand is not resolved"):
        calibrate_cost.transpose_rates(_copy_times(extra), _L2, _L1)


def test_drift_beyond_twice_is_named():
    rates = {"a_per_second": (1e9, 2.1e9), "b_per_second": (1e9, 0.49e9),
             "c_per_second": (1e9, 1.9e9), "d_per_second": (1e9, 0.6e9)}
    moved = calibrate_cost.drifted(rates)
    assert [line.split(":")[0] for line in moved] == ["a_per_second", "b_per_second"]


# ----- the committed header (cc/model/cost/cost_constants.h) ---------------------------


@pytest.fixture(scope="module")
def header():
    constants, seconds, provenance = calibrate_cost.read_header()
    return constants, seconds, provenance


def test_header_is_what_the_script_writes(header):
    # Not edited by hand: the script reproduces it from its own figures.
    assert calibrate_cost.header_text(*header) == calibrate_cost.HEADER.read_text()


def test_header_constants_are_positive(header):
    constants = header[0]
    assert set(constants) == set(calibrate_cost._COMMENTS)
    assert all(value > 0 for value in constants.values()), constants
    assert 0 < constants["trip_seconds"] < constants["op_seconds"]


def test_header_rates_are_the_benchmarks_work_over_their_times(header):
    # A rate scaled by hand, or a time pasted from another run, breaks this.
    # The times are printed to 1 us and the rates to 4 digits: 0.2% apart at most.
    constants, seconds, _ = header
    rates = calibrate_cost.direct_rates(seconds)
    assert set(rates) == {bench.constant for bench in calibrate_cost.DIRECT.values()}
    for name, rate in rates.items():
        assert math.isclose(rate, constants[name], rel_tol=2e-3), (name, rate, constants[name])


def test_header_trip_is_the_loops_fit(header):
    constants, seconds, _ = header
    per_trip = {int(name[len("loop_"):]): took / calibrate_cost._TRIPS
                for name, took in seconds.items() if name.startswith("loop_")}
    assert len(per_trip) >= 2, "the header records no loop benchmarks to fit"
    fitted = calibrate_cost.fit_loop(per_trip)["trip_seconds"]
    assert math.isclose(fitted, constants["trip_seconds"], rel_tol=2e-3)


def test_header_transpose_rates_are_the_products_differences(header):
    constants, seconds, _ = header
    rates = calibrate_cost.transpose_rates(seconds, constants["transpose_cache_bytes"],
                                           constants["transpose_lines_cache_bytes"])
    assert set(rates) == {"transpose_cache_bytes", "transpose_lines_cache_bytes",
                          "transpose_cached_bytes_per_second", "transpose_bytes_per_second"}
    for name, rate in rates.items():
        assert math.isclose(rate, constants[name], rel_tol=2e-3), (name, rate, constants[name])
    assert constants["transpose_bytes_per_second"] < constants["transpose_cached_bytes_per_second"]


def test_extension_is_built_from_the_header(header):
    from tests._extension import load_extension

    built = load_extension().CostConstants()
    for name, value in header[0].items():
        assert getattr(built, name) == value, name


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("EXLA_CHECK_COST_DRIFT"),
                    reason="machine-dependent: set EXLA_CHECK_COST_DRIFT=1 on the machine the "
                           "header was calibrated on, unloaded (python -m experiments "
                           "calibrate_cost --check does the same)")
def test_rates_have_not_drifted():
    from tests._extension import load_extension

    load_extension()
    moved = calibrate_cost.drifted(calibrate_cost.drift())
    assert not moved, moved


def test_a_part_measured_again_is_said_once(header):
    lines = header[2]
    parts = [line.split(" 20")[0] for line in lines if line.endswith("cores, jaxlib")]
    assert len(set(parts)) == len(parts), parts
    again = calibrate_cost.without_part(lines, "Transposes measured")
    assert len(again) == len(lines) - 3
    assert not any(line.startswith("Transposes measured") for line in again)
