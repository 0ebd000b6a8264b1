"""Lists the end-to-end tests that still pass when exla silently runs the original programs.

    python -m experiments noop_run [TEST_FILE ...]

``EXLA_INJECT_FAILURE=noop`` (:mod:`exla._fault_injection`) makes every
frontend run the original program as if no pass had changed it, with no
warning and no error, strict or not. A test of a rewrite that still passes
then does not check that the rewritten program ran. The tests run in one
pytest child (the files given, or :data:`END_TO_END`); the command prints
every test that passed, and exits with 1 when one of them is neither named as
a test that does not rewrite (``unchanged`` or ``no_rewrite`` in its name) nor
listed in :data:`NOT_REWRITING` with its reason. It runs the programs of
those files (minutes): it is not part of the default test suite.

>>> expected_to_pass("tests/x.py::test_unchanged_program_is_not_rewritten")
'named so'
>>> expected_to_pass("tests/x.py::test_split[f32]") is None
True
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

__all__ = ["END_TO_END", "NOT_REWRITING", "expected_to_pass", "passed_tests", "main"]

REPO = Path(__file__).resolve().parents[2]

# The files whose tests run a rewrite end to end through a frontend (issue 43).
END_TO_END = (
    "tests/python/test_topk_split.py",
    "tests/python/test_softmax_split.py",
    "tests/python/jax/test_jit.py",
    "tests/python/jax/test_jax_compile.py",
    "tests/python/tensorflow/test_function.py",
)

# Tests that pass under noop by design, by node id prefix, with the reason.
_SOFTMAX = "tests/python/test_softmax_split.py::"
NOT_REWRITING: dict[str, str] = {
    **{_SOFTMAX + name: "runs exla.explain's rewritten text directly (call_hlo): no frontend "
                        "that could fall back"
       for name in ("test_tf_sparse_cross_entropy_splits_the_vocabulary",
                    "test_masked_row_gives_what_the_program_gives",
                    "test_tf_softmax_and_log_softmax_with_gradients")},
    "tests/python/jax/test_jit.py::test_calling_convention": "no program above a threshold",
    "tests/python/jax/test_jit.py::test_bad_input_is_rejected_clearly": "input errors only",
    "tests/python/jax/test_jit.py::test_explain_": "exla.explain: reports, runs nothing",
    "tests/python/jax/test_jit.py::test_docstring_example": "the doctest compares numbers "
                                                           "and exla.explain's report",
    "tests/python/jax/test_jit.py::test_memory_limit_that_cannot_be_met": "an error before "
                                                                          "anything runs",
    "tests/python/jax/test_jit.py::test_failure_falls_back": "exla fails before the noop",
    "tests/python/jax/test_jit.py::test_strict_raises": "exla fails before the noop",
    "tests/python/jax/test_jit.py::test_a_module_xla_rejects": "exla fails before the noop",
    "tests/python/jax/test_jit.py::test_strict_": "strict errors before anything runs",
    "tests/python/jax/test_jit.py::test_settings_not_found": "exla fails before the noop",
    "tests/python/jax/test_jax_compile.py::test_exla_disable": "exla switched off",
    "tests/python/jax/test_jax_compile.py::test_misspelt_flag": "an import error",
    "tests/python/tensorflow/test_function.py::test_exla_disable": "exla switched off",
    "tests/python/tensorflow/test_function.py::test_failing_pass": "exla fails before the noop",
    "tests/python/tensorflow/test_function.py::test_broken_artifact": "exla fails before "
                                                                      "the noop",
    "tests/python/tensorflow/test_function.py::test_user_errors": "the user's error",
    "tests/python/tensorflow/test_function.py::test_disabled_passes": "the splitter is off",
    "tests/python/tensorflow/test_function.py::test_bad_options": "input errors only",
}

_NAMED = re.compile(r"unchanged|no_rewrite")


def expected_to_pass(node_id: str) -> str | None:
    """Why ``node_id`` may pass under noop (``'named so'`` or its listed reason), or None."""
    name = node_id.split("::")[-1]
    if _NAMED.search(name.split("[")[0]):
        return "named so"
    return next((reason for prefix, reason in NOT_REWRITING.items()
                 if node_id.startswith(prefix)), None)


def passed_tests(junit_xml: str) -> list[str]:
    """The node ids of the tests a JUnit XML report (pytest ``--junitxml``) lists as passed."""
    passed = []
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        if any(child.tag in ("failure", "error", "skipped") for child in case):
            continue
        path = case.get("classname", "").replace(".", "/")
        passed.append(f"{path}.py::{case.get('name')}")
    return passed


def _run_pytest(files: list[str], junit_xml: str) -> int:
    env = dict(os.environ, EXLA_INJECT_FAILURE="noop")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={junit_xml}", *files]
    return subprocess.run(command, cwd=REPO, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments noop_run",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", default=list(END_TO_END))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="exla_noop_") as tmp:
        junit = os.path.join(tmp, "noop.xml")
        _run_pytest(args.files, junit)
        passed = passed_tests(junit)
    unexpected = [node for node in passed if expected_to_pass(node) is None]
    print(f"\n{len(passed)} test(s) passed with EXLA_INJECT_FAILURE=noop:")
    for node in passed:
        reason = expected_to_pass(node)
        print(f"  {node}: " + (reason if reason else "PASSES ON A NO-OP"))
    print(f"{len(unexpected)} test(s) would pass if exla did nothing")
    return 1 if unexpected else 0
