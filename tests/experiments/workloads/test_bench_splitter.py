"""bench_splitter checks the rewritten program's output and records no peak it did not measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from experiments import REPO_ROOT
from experiments.workloads import bench_splitter

from ..._frameworks import require


def test_the_child_checks_sampled_rows_against_numpy() -> None:
    require("tensorflow")
    import exla

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(Path(exla.__file__).resolve().parents[1])])
    proc = subprocess.run([sys.executable, "-m", "experiments", "bench_splitter", "--child", "3000"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    # f64 throughout: the loop's sums differ from NumPy's in rounding only.
    assert 0 <= child["rel_error_sampled_rows"] < 1e-12


def test_the_sampled_reference_is_the_kernel_product() -> None:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(size=(50, 3)), rng.normal(size=(50, 1))
    full = np.exp(-0.5 * ((x[:, None] - x[None]) ** 2).sum(-1)) @ v
    rows = np.array([3, 17, 42])
    assert bench_splitter._relative_error(bench_splitter._sampled_reference(x, v, rows),
                                          full[rows]) < 1e-15
    assert bench_splitter._relative_error(full[rows] * 1.01, full[rows]) > 1e-3
