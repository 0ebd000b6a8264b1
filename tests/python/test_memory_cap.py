"""exla.memory_cap: children under a hard memory cap."""

import sys

from exla.memory_cap import run_capped


def test_child_within_cap_runs_normally():
    run = run_capped([sys.executable, "-c", "import numpy as np; print(np.ones(10**7).sum())"],
                     2 * 2**30)
    assert run.returncode == 0 and not run.out_of_memory
    assert run.stdout.strip() == "10000000.0"


def test_child_over_cap_is_reported_out_of_memory():
    # 2 GB of float64 ones against a 512 MB cap.
    run = run_capped([sys.executable, "-c", "import numpy as np; a = np.ones(2 * 10**8 + 1)"],
                     512 * 2**20)
    assert run.returncode != 0
    assert run.out_of_memory
