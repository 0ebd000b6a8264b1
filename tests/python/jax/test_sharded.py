"""Sharded programs on 8 simulated CPU devices: exla.jit and the XLA_FLAGS path.

Each mode runs ``_sharded_programs.py`` once in a child process (the device
count must be set before jax starts) and the tests read what it measured:
results against plain sharded ``jax.jit``, the unsharded program and float64
references; XLA's planned memory of one device's partitioned executable; the
collectives the partitioner added, and where.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import exla

pytestmark = pytest.mark.usefixtures("extension")

PYTHON_DIR = Path(exla.__file__).resolve().parents[1]
CHILD = Path(__file__).with_name("_sharded_programs.py")
DEVICES = "--xla_force_host_platform_device_count=8"


def _measure(tmp_path_factory, mode: str, xla_flags: str) -> dict:
    out = tmp_path_factory.mktemp(mode) / "results.json"
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS", "EXLA_DISABLE")}
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), env.get("PYTHONPATH", "")])
    env["XLA_FLAGS"] = xla_flags
    done = subprocess.run([sys.executable, str(CHILD), mode, str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def jit_results(tmp_path_factory):
    return _measure(tmp_path_factory, "jit", DEVICES)


@pytest.fixture(scope="module")
def flags_results(tmp_path_factory):
    return _measure(tmp_path_factory, "flags",
                    f"{DEVICES} --xla_tensor_size_threshold=1MB --exla_strict")


def _in_loops(case: dict, opcode: str | None = None) -> list[dict]:
    return [c for c in case["collectives"] if c["in_loop"] and opcode in (None, c["opcode"])]


def _check_kernel_matvec(case: dict) -> None:
    assert case["rewrote"]
    # f32 sums in another order: as close to jax.jit as jax.jit is to float64.
    assert case["error_vs_jit"] <= 1e-5
    assert case["error_vs_float64"] <= max(2 * case["jit_error_vs_float64"], 1e-6)
    # The result stays cut by rows, as plain jax.jit leaves it.
    assert case["sharding"] == case["plain_sharding"] == ["x"]
    # One device's planned scratch memory: the 6.3 MB difference is gone.
    assert case["memory"]["temp"] <= 1_000_000 < case["plain_memory"]["temp"]
    # The loop slices what each device holds: no collective inside it, and
    # the only gather outside is of the points themselves (k(x_i, x_j) needs
    # every x_j on every device), never of the kernel.
    assert not _in_loops(case)
    assert all(c["bytes"] <= case["x_bytes"] for c in case["collectives"])


def test_exla_jit_kernel_matvec_rows_sharded(jit_results):
    assert jit_results["devices"] == 8
    _check_kernel_matvec(jit_results["kernel_matvec"])


def test_unchanged_script_under_xla_flags_kernel_matvec_rows_sharded(flags_results):
    assert flags_results["devices"] == 8
    _check_kernel_matvec(flags_results["kernel_matvec"])


def test_gspmd_partitioner_kernel_matvec(jit_results):
    _check_kernel_matvec(jit_results["kernel_matvec_gspmd"])


def test_data_parallel_mlp_step_equals_the_unsharded_program(jit_results):
    case = jit_results["mlp"]
    assert case["rewrote"]
    assert case["error_vs_unsharded"] <= 1e-5
    assert case["error_vs_float64"] <= max(2 * case["unsharded_error_vs_float64"], 1e-6)
    # The 1 MB of activations per device are gone from the plan.
    assert case["memory"]["temp"] <= 512_000 < case["plain_memory"]["temp"]
    # The gradients are still summed across devices; where a loop computes a
    # gradient slice by slice, the partitioner sums each slice in the loop.
    assert any(c["opcode"] == "all-reduce" for c in case["plain_collectives"])
    assert all(c["opcode"] == "all-reduce" for c in case["collectives"])
    assert sum(c["bytes"] for c in case["collectives"] if not c["in_loop"]) <= sum(
        c["bytes"] for c in case["plain_collectives"])


def test_knn_in_shard_map_is_split_on_each_device(jit_results):
    case = jit_results["knn_shard_map"]
    assert case["rewrote"]
    assert case["indices_equal_unsharded"] and case["indices_equal_float64"]
    assert case["error_vs_unsharded"] <= 1e-6
    assert case["memory"]["temp"] <= 1_000_000 < case["plain_memory"]["temp"]
    assert not case["collectives"]


def test_knn_with_rows_cut_between_devices_loops_over_the_points(jit_results):
    # The queries (rows of distances) are cut between devices, so no loop may
    # run over them; the loop runs over the points instead, merging each
    # chunk's top-k candidates with the best kept so far (topk_merge.h), and
    # finds the unsharded program's neighbours, ties broken alike.
    case = jit_results["knn_jit"]
    assert case["rewrote"], case["log"]
    assert case["indices_equal_unsharded"] and case["indices_equal_float64"]
    assert case["error_vs_unsharded"] <= 1e-6
    assert case["memory"]["temp"] <= 1_000_000 < case["plain_memory"]["temp"], case


def test_results_asked_for_another_sharding_are_resharded_at_the_end(jit_results):
    case = jit_results["out_shardings"]
    assert case["rewrote"]
    assert case["error_vs_jit"] <= 1e-5
    assert case["shardings"] == [["a"], []]
    assert case["memory"]["temp"] <= 1_000_000 < case["plain_memory"]["temp"]
    assert not _in_loops(case)


def test_memory_limit_holds_per_device(jit_results):
    case = jit_results["memory_limit"]
    assert case["memory"]["total"] <= case["limit"]
    assert case["error_vs_float64"] <= 1e-12
