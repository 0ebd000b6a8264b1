"""A ``fresh_interpreter`` test takes its child's outcome as its own."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests._fresh_interpreter import MARKER, in_child, run_in_child

_CASES = "tests/_fresh_interpreter_cases.py"


def _case(request, name: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=f"{_CASES}::{name}", config=request.config)


@pytest.mark.fresh_interpreter
def test_a_marked_body_runs_in_a_child():
    assert in_child()


def test_the_marker_is_registered(pytestconfig):
    assert any(line.startswith(f"{MARKER}:") for line in pytestconfig.getini("markers"))


def test_a_body_that_passes_passes(request):
    run_in_child(_case(request, "test_passes_in_a_child"))


def test_a_body_that_fails_fails_with_its_report(request):
    with pytest.raises(pytest.fail.Exception, match="the body's own assertion"):
        run_in_child(_case(request, "test_fails"))


def test_a_body_that_skips_skips_with_its_reason(request):
    with pytest.raises(pytest.skip.Exception, match="the body's own reason"):
        run_in_child(_case(request, "test_skips"))


def test_a_child_that_runs_no_test_fails(request):
    with pytest.raises(pytest.fail.Exception, match="in a fresh interpreter"):
        run_in_child(_case(request, "test_that_does_not_exist"))
