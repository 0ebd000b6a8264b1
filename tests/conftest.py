"""Makes the repository root importable, so that tests share `tests._extension`.

Tests marked `needs_cgroup` are skipped where no memory cgroup can be created,
and the run's summary says how many were and why (`tests._cgroup`). The
summary also states the pytest process's peak resident memory and the tests
that raised it most (`tests._resident`). Scale tests marked `fresh_interpreter`
run their body in a child interpreter, whose memory leaves with it
(`tests._fresh_interpreter`).

It also applies the test environments' rule for missing frameworks
(`tests._frameworks.require`) to the HLO corpus: `experiments.corpus` knows
nothing of pytest and raises `MissingFramework` for a program whose framework
is not installed; a test (or fixture) that meets it is skipped where its
environment leaves that framework out by design, and fails anywhere else.
"""

from __future__ import annotations

import gc

import pytest

from experiments.corpus.programs import MissingFramework
from tests import _cgroup, _fresh_interpreter
from tests._resident import ReleaseAfterGrowth, ResidentTracker
from tests._frameworks import require


def _missing_framework_as_the_environment_says():
    try:
        return (yield)
    except MissingFramework as missing:
        require(missing.name)  # skips or fails the test
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _missing_framework_as_the_environment_says())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _missing_framework_as_the_environment_says())


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if (pyfuncitem.get_closest_marker(_fresh_interpreter.MARKER) is None
            or _fresh_interpreter.in_child()):
        return None  # the body runs here
    _fresh_interpreter.run_in_child(pyfuncitem)
    return True


def pytest_runtest_logreport(report):
    if _fresh_interpreter.in_child():
        _fresh_interpreter.record_child_report(report)


@pytest.fixture(autouse=True)
def _needs_cgroup(request):
    if request.node.get_closest_marker(_cgroup.MARKER) is not None:
        _cgroup.skip_without_cgroup(request.node)


def pytest_collection_finish(session):
    # What collection imported (TensorFlow, jax: half a million objects) lives
    # for the whole run: kept out of every later full collection, which would
    # otherwise walk it each time (a second or two, issue 43.7).
    gc.freeze()


_release = ReleaseAfterGrowth()


@pytest.fixture(autouse=True, scope="module")
def _release_memory_after_module():
    yield
    _release.after_module()


_resident = ResidentTracker()


def pytest_runtest_logfinish(nodeid, location):
    _resident.after_test(nodeid)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(_resident.summary())
    skipped = _cgroup.skipped()
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} test(s) skipped: no memory cgroup can be created here "
            f"(marked {_cgroup.MARKER}): " + ", ".join(skipped))
