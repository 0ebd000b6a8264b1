"""A memory limit holds a real process: SGPR under a hard cap of limit + fixed cost + 10%.

GPflow SGPR's loss and gradients (f64, N = 20,000, M = 1,500) need about
1.5 GB of XLA's planned memory as TensorFlow compiles them. Under
``memory_limit="400MB"`` exla's plan fits 400 MB; the process also holds
TensorFlow's runtime, which exla measures once per process (the plan's
``runtime_cost``). An uncapped reference child gives that fixed cost, the
plan and the loss (GPflow run eagerly); then plain XLA and exla each run in a
child under a cgroup cap of ``(limit + fixed cost) * 1.1``: plain XLA runs out
of memory, exla's rewritten program runs and gives the reference loss.

Slow (two to three minutes on two shared cores: each child imports
TensorFlow and GPflow, exla's search compiles the gradient module).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading

import pytest

from exla.memory_cap import run_capped
from exla.options import parse_size

from .conftest import REPO, exla_import_path

N, M, LIMIT = 20_000, 1_500, "400MB"
# The search starts from these (two XLA compilations instead of up to 12).
THRESHOLD, SPLIT = "150MB", "40MB"
MARGIN = 1.10

_log = logging.getLogger(__name__)


def _argv(mode: str) -> list[str]:
    return [sys.executable, "-m", "tests.python._sgpr_capped_child", mode, str(N), str(M), LIMIT,
            THRESHOLD, SPLIT]


def _env() -> dict[str, str]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", EXLA_REQUIRE_EXTENSION="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), exla_import_path(), env.get("PYTHONPATH", "")])
    env.pop("XLA_FLAGS", None)
    return env


def _result(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, f"the child printed no result:\n{stdout[-2000:]}"
    return json.loads(lines[-1])


def _capped_in_parallel(cap: int) -> dict:
    """Plain XLA and exla, each in a child under ``cap`` bytes, at the same time."""
    runs: dict = {}

    def run(mode: str) -> None:
        runs[mode] = run_capped(_argv(mode), cap, env=_env(), timeout=600)

    threads = [threading.Thread(target=run, args=(mode,)) for mode in ("plain", "exla")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return runs


# A memory cgroup: an address-space limit (RLIMIT_AS) is no cap on TensorFlow,
# which reserves far more address space than it uses.
@pytest.mark.slow
@pytest.mark.needs_cgroup
def test_sgpr_fits_cap_of_limit_plus_fixed_cost_where_plain_xla_does_not(extension):
    reference = subprocess.run(_argv("reference"), env=_env(), capture_output=True, text=True,
                               timeout=600, cwd=REPO)
    assert reference.returncode == 0, reference.stderr[-3000:]
    ref = _result(reference.stdout)
    limit = parse_size(LIMIT)
    assert ref["fits"] and ref["planned_peak"] <= limit
    assert ref["plain_planned_peak"] > 3 * limit  # plain XLA plans far more than the limit
    cap = int((limit + ref["fixed_bytes"]) * MARGIN)

    runs = _capped_in_parallel(cap)
    plain, capped = runs["plain"], runs["exla"]
    _log.warning("SGPR N=%d M=%d: plan %d (plain %d), fixed %d, cap %d; reference peak RSS %d, "
                 "exla under the cap: cgroup peak %s, %s; plain: rc %s, cgroup peak %s",
                 N, M, ref["planned_peak"], ref["plain_planned_peak"], ref["fixed_bytes"], cap,
                 ref["peak_rss"], capped.peak_bytes, capped.stdout.strip()[-400:],
                 plain.returncode, plain.peak_bytes)
    assert plain.returncode != 0 and plain.out_of_memory, plain.stderr[-2000:]
    assert capped.returncode == 0 and not capped.out_of_memory, capped.stderr[-3000:]
    got = _result(capped.stdout)
    assert got["rewritten"] and got["runs"] >= 1 and got["fits"]
    assert got["exla_loss"] == pytest.approx(ref["eager_loss"], rel=1e-10)
