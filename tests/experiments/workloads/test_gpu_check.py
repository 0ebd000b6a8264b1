"""``python -m experiments gpu_check`` on the CPU: its logic, where CI can run it.

The GPU run itself needs a GPU (python/README.md: "On a GPU"); here the same command
runs at the CPU scale in a JAX-only process, and every row it prints must
be a real measurement: exla's program ran, within its limit, as close to
float64 as plain jax.jit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import REPO_ROOT as REPO
from experiments.workloads import gpu_check


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    import exla

    out = tmp_path_factory.mktemp("gpu_check") / "rows.json"
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(exla.__file__).resolve().parents[1]), str(REPO)])
    done = subprocess.run([sys.executable, "-m", "experiments", "gpu_check", "--scale", "cpu",
                           "--workloads", "kernel_matvec", "attention", "--repeats", "1",
                           "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| kernel_matvec" in done.stdout  # the table
    result = json.loads(out.read_text())
    assert result["scale"] == "cpu"
    return result["rows"]


def _row(rows, workload, mode):
    (row,) = [r for r in rows if r["workload"] == workload and r["mode"] == mode]
    return row


@pytest.mark.parametrize("workload", ["kernel_matvec", "attention"])
def test_exla_ran_within_its_limit_and_as_accurately_as_plain(rows, workload):
    from exla.options import parse_size

    plain, ours = _row(rows, workload, "plain"), _row(rows, workload, "exla")
    limit = parse_size(ours["limit"])
    assert plain["status"] == ours["status"] == "ok"
    assert ours["meets_limit"] and ours["planned_peak_bytes"] <= limit
    assert not plain["ran_rewritten"]
    if plain["planned_peak_bytes"] <= limit:
        # jaxlib 0.7.1's XLA fuses the kernel matvec's exp into its reduction
        # (no n x n buffer); exla then leaves the program as it is.
        assert workload == "kernel_matvec" and not ours["ran_rewritten"]
    else:
        assert ours["ran_rewritten"]
    assert ours["error_vs_plain"] < 1e-5
    assert ours["error_vs_float64"] <= 2 * plain["error_vs_float64"] + 1e-7
    assert ours["time_s"] > 0 and ours["backend"] == "cpu"
    assert ours["device_peak_bytes"] is None  # the CPU has no memory_stats()


def test_a_failed_child_is_a_row_with_its_reason(monkeypatch):
    class Done:
        returncode, stdout = 1, ""
        stderr = "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 160 GB"

    monkeypatch.setattr(gpu_check.subprocess, "run", lambda *a, **k: Done())
    args = gpu_check.argparse.Namespace(scale="gpu", repeats=1, timeout=1.0)
    row = gpu_check._child("kernel_matvec", "plain", args)
    assert row["status"] == "out of memory" and "160 GB" in row["message"]
    assert "| kernel_matvec  | plain  | out of memory |" in gpu_check.table([row])


def test_the_gpu_scale_exceeds_one_h200_where_it_says_so():
    # The kernel matrix of the GPU scale (f32) is larger than an H200's 141 GB.
    n = gpu_check.SCALES["gpu"]["kernel_matvec"].size["n"]
    assert 4 * n * n > 141e9
