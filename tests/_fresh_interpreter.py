"""Scale tests run in a fresh interpreter, so their memory leaves with it (issue 43.7).

A test marked ``fresh_interpreter`` is collected and set up as usual, but its
body runs in a child ``python -m pytest <its node id>`` with the same
environment and working directory. The parent takes the child's outcome as
its own: a failure fails it (with the child's report), a skip skips it, a
child that ran no test fails it. What the body allocated (compiled 100 MB
modules, TensorFlow's and jaxlib's arenas, which no clean-up in this process
returns) is gone when the child exits, so the pytest process's peak stays
that of its lighter tests (see `tests._resident`).

The child writes its outcome as JSON to the file named by
``EXLA_TEST_OUTCOME_FILE``; that variable also tells the child's conftest
to run the body in place.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests._resident import LOG_VARIABLE, peak_resident_bytes

__all__ = ["MARKER", "in_child", "run_in_child", "record_child_report"]

MARKER = "fresh_interpreter"
_OUTCOME_VARIABLE = "EXLA_TEST_OUTCOME_FILE"


def in_child() -> bool:
    """Whether this process is the child of a ``fresh_interpreter`` test."""
    return _OUTCOME_VARIABLE in os.environ


def _child_command(item: pytest.Item) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
            str(item.config.rootpath), item.nodeid]


def run_in_child(item: pytest.Item) -> None:
    """Runs ``item``'s body in a child interpreter and takes on its outcome."""
    with tempfile.TemporaryDirectory(prefix="exla-fresh-") as directory:
        outcome_file = Path(directory) / "outcome.json"
        env = dict(os.environ)
        env[_OUTCOME_VARIABLE] = str(outcome_file)
        env.pop(LOG_VARIABLE, None)  # the parent's log: the child keeps none
        proc = subprocess.run(_child_command(item), cwd=item.config.rootpath, env=env,
                              capture_output=True, text=True)
        outcome = json.loads(outcome_file.read_text()) if outcome_file.exists() else {}
    sys.stdout.write(proc.stdout)  # the body's printed figures, as `pytest -s` shows them
    sys.stderr.write(proc.stderr)
    if "peak_bytes" in outcome:
        print(f"[fresh interpreter] child's peak resident memory: "
              f"{outcome['peak_bytes'] / 2**30:.2f} GiB")
    status = outcome.get("outcome")
    if status == "skipped":
        pytest.skip(outcome["message"])
    if status != "passed":
        pytest.fail(f"in a fresh interpreter ({' '.join(_child_command(item))}, exit "
                    f"{proc.returncode}):\n{outcome.get('message') or proc.stdout[-6000:]}",
                    pytrace=False)


def _merge(previous: dict, report: pytest.TestReport) -> dict:
    """One test's outcome over its phases: the first failure or skip wins."""
    if previous.get("outcome") in ("failed", "skipped"):
        return previous
    if report.failed or report.skipped:
        message = (report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple)
                   else report.longreprtext)
        return {"outcome": report.outcome, "message": message}
    if report.when == "call":
        return {"outcome": "passed", "message": ""}
    return previous


def record_child_report(report: pytest.TestReport) -> None:
    """In the child: folds one phase's report, and the peak so far, into the outcome file."""
    path = Path(os.environ[_OUTCOME_VARIABLE])
    outcome = _merge(json.loads(path.read_text()) if path.exists() else {}, report)
    outcome["peak_bytes"] = peak_resident_bytes()
    path.write_text(json.dumps(outcome))
