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
END_TO_END = tuple(f"tests/python/{name}.py" for name in (
    "test_topk_split", "test_softmax_split", "test_attention_split", "test_f64_rounding",
    "test_autoload", "jax/test_jit", "jax/test_jax_compile", "jax/test_training",
    "jax/test_sharded", "jax/test_backend_planner", "jax/test_two_processes",
    "tensorflow/test_function", "tensorflow/test_executed_plan",
    "memory_limit/test_memory_limit", "memory_limit/test_plan_choice"))


def _listed(module: str, names: str, reason: str) -> dict[str, str]:
    return {f"tests/python/{module}.py::{name}": reason for name in names.split()}


_HLO_LEVEL = ("the HLO-level API (optimize_hlo, or exla.explain's text run with call_hlo): no "
              "frontend that could fall back")
_BEFORE = "exla fails, or refuses the input, before anything could run"

# Tests that pass under noop by design, by node id prefix, with the reason.
NOT_REWRITING: dict[str, str] = {
    **_listed("test_softmax_split", "test_tf_sparse_cross_entropy_splits_the_vocabulary "
              "test_masked_row_gives_what_the_program_gives "
              "test_tf_softmax_and_log_softmax_with_gradients", _HLO_LEVEL),
    **_listed("memory_limit/test_memory_limit", "test_kernel_matvec_fits_and_computes_the_same "
              "test_report_counts_the_work_loops_repeat test_met_limit_is_not_split_further "
              "test_cross_entropy_writes_its_weight_gradient_under_the_limit "
              "test_attention_gradients_fit_in_one_pass_without_recomputation "
              "test_constants_count_in_the_limit test_limit_that_cannot_be_met "
              "test_strict_from_environment test_threshold_ test_limit_below_inputs "
              "test_cli_memory_limit", _HLO_LEVEL),
    **_listed("memory_limit/test_memory_limit", "test_flag_from_xla_flags_and_exla_flags "
              "test_function_reads_the_flag", "reads settings, runs nothing"),
    **_listed("memory_limit/test_plan_choice", "test_the_cost_model_chooses "
              "test_the_models_rank test_a_value_is_kept_whole", _HLO_LEVEL),
    **_listed("jax/test_backend_planner", "test_the_report_says "
              "test_the_cpu_planner_is_the_default", "exla.explain's report: runs nothing"),
    **_listed("test_autoload", "test_pth_ test_unknown_exla_flag test_should_activate "
              "test_invalid_exla_disable test_flags_leave_xla_flags test_bad_flag",
              "the start-up hook's flag handling: no program"),
    **_listed("jax/test_jit", "test_explain_", "exla.explain's report: runs nothing"),
    **_listed("jax/test_jit", "test_docstring_example", "the doctest checks numbers and "
              "exla.explain's report (the rewrite's run is test_float32_...'s)"),
    **_listed("jax/test_jit", "test_calling_convention", "jax.jit's conventions on programs "
              "below any threshold"),
    **_listed("jax/test_jit", "test_bad_input test_memory_limit_that_cannot_be_met "
              "test_failure_falls_back test_strict_ test_settings_not_found "
              "test_a_module_xla_rejects", _BEFORE),
    **_listed("jax/test_jax_compile", "test_exla_disable", "exla switched off"),
    **_listed("jax/test_jax_compile", "test_misspelt_flag", _BEFORE),
    **_listed("tensorflow/test_function", "test_exla_disable", "exla switched off"),
    **_listed("tensorflow/test_function", "test_failing_pass test_broken_artifact "
              "test_user_errors test_bad_options", _BEFORE),
    **_listed("tensorflow/test_function", "test_disabled_passes", "the splitter is off: "
              "checks that it changed nothing"),
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
