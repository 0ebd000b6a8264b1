"""experiments.tools.noop_run: which tests passed, and which of them may."""

from __future__ import annotations

from experiments.tools import noop_run

_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.python.jax.test_jit" name="test_split[f32]" time="1"/>
  <testcase classname="tests.python.jax.test_jit" name="test_unchanged_program" time="1"/>
  <testcase classname="tests.python.jax.test_jit" name="test_failing" time="1">
    <failure message="assert 0 == 1">...</failure></testcase>
  <testcase classname="tests.python.jax.test_jit" name="test_skipped" time="0">
    <skipped message="no jax"/></testcase>
  <testcase classname="tests.python.jax.test_jit" name="test_error" time="0">
    <error message="fixture"/></testcase>
</testsuite></testsuites>
"""


def test_only_passed_tests_are_listed(tmp_path):
    report = tmp_path / "noop.xml"
    report.write_text(_JUNIT)
    assert noop_run.passed_tests(str(report)) == [
        "tests/python/jax/test_jit.py::test_split[f32]",
        "tests/python/jax/test_jit.py::test_unchanged_program"]


def test_a_pass_is_expected_only_when_named_or_listed():
    assert noop_run.expected_to_pass("tests/a.py::test_x_no_rewrite[f32]") == "named so"
    assert noop_run.expected_to_pass("tests/a.py::test_split_unchanged_cases") == "named so"
    listed = next(iter(noop_run.NOT_REWRITING))
    assert noop_run.expected_to_pass(listed) == noop_run.NOT_REWRITING[listed]
    assert noop_run.expected_to_pass("tests/a.py::test_split[unchanged]") is None
