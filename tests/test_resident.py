"""The test process's resident-memory report (tests/_resident.py)."""

from __future__ import annotations

from tests._resident import ResidentTracker, current_resident_bytes, peak_resident_bytes

GIB = 2**30


def _peaks(*values: int):
    """A peak reader that returns `values` in turn (the process's own peak is
    whatever earlier tests left, so it cannot be steered from here)."""
    it = iter(values)
    return lambda: next(it)


def test_tests_that_raise_the_peak_are_named_largest_first():
    tracker = ResidentTracker(read_peak=_peaks(1 * GIB, 1 * GIB, 2 * GIB, 5 * GIB))
    tracker.after_test("tests/x.py::same")
    tracker.after_test("tests/x.py::one")
    tracker.after_test("tests/x.py::three")
    assert tracker.raises == [(1 * GIB, "tests/x.py::one"), (3 * GIB, "tests/x.py::three")]
    assert tracker.summary() == (
        "pytest process peak resident memory: 5.00 GiB (largest rises: "
        "tests/x.py::three +3.00 GiB, tests/x.py::one +1.00 GiB)")


def test_a_run_that_never_raised_the_peak_much_names_no_test():
    tracker = ResidentTracker(read_peak=_peaks(2 * GIB, 2 * GIB, 2 * GIB + 4096))
    tracker.after_test("tests/x.py::same")
    tracker.after_test("tests/x.py::one_page")
    assert tracker.summary() == "pytest process peak resident memory: 2.00 GiB"


def test_the_process_figures_are_read():
    # Both from /proc/self/status, where the high-water mark never lags VmRSS.
    assert 0 < current_resident_bytes() <= peak_resident_bytes()
