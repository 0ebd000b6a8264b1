"""Smoke runs of the experiments: the harness end to end on tiny sizes.

Each runs ``python -m experiments <name> --smoke`` into a temporary results
folder and checks the CSV rows: every configuration ran (status ``ok``), with
positive times, a plausible peak RSS and a small error against the reference,
and every exla row ran exla's rewritten program (read from the executable
that ran: more loops than the plain program's, planned memory of that
executable), so a silent fallback to the original program fails them.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from experiments import REPO_ROOT as ROOT


def _run(name: str, results: Path, *extra: str) -> list[dict[str, str]]:
    env = dict(os.environ)
    # The children import exla from where this test did (the checkout's
    # python/ in development, site-packages after `pip install .`).
    import exla

    exla_path = str(Path(exla.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), exla_path, env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "experiments", name, "--smoke", "--repeats", "1",
                           "--results-dir", str(results), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(results / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def _check(rows: list[dict[str, str]], backends: set[str], max_error: float) -> None:
    assert {r["backend"] for r in rows} == backends
    for r in rows:
        assert r["status"] == "ok", r
        assert 0 < float(r["time_s"]) < 60 and float(r["first_call_s"]) > 0, r
        assert int(r["repeats"]) >= 1 and float(r["time_min_s"]) <= float(r["time_s"]) \
            <= float(r["time_max_s"]), r
        assert 10 < float(r["peak_rss_mb"]) < 4096, r
        if r["error"]:
            assert float(r["error"]) <= max_error, r
    exla = [r for r in rows if r["backend"] == "exla"]
    assert exla and all(r["error"] for r in exla)
    _check_executed(rows)


def _check_executed(rows: list[dict[str, str]]) -> None:
    """Every exla row ran exla's program: its loops and planned memory are of that executable.

    Fails when exla fell back to the original program or changed nothing
    (``ran_rewritten`` is read from the executable that ran, not from exla's
    report), and when the planned-memory columns came from anywhere else.
    """
    for r in rows:
        if r["backend"] not in ("exla", "tf", "jax"):
            continue
        assert r["planned_from"] == "executable" and r["planned_peak_mb"], r
        assert r["loops"] != "", r
        if r["backend"] == "exla":
            assert r["ran_rewritten"] == "yes", r
            assert int(r["loops"]) > int(r["loops_plain"]), r


def test_kernel_matvec_smoke(tmp_path: Path) -> None:
    rows = _run("kernel_matvec", tmp_path, "--backends", "tf", "exla", "keops")
    _check(rows, {"tf", "exla", "keops"}, 1e-10)
    assert (tmp_path / "kernel_matvec.machine.json").exists()
    assert (tmp_path / "kernel_matvec_memory.png").stat().st_size > 1000
    assert "kernel_matvec" in (tmp_path / "RESULTS.md").read_text()


def test_sgpr_smoke(tmp_path: Path) -> None:
    rows = _run("sgpr", tmp_path)
    _check(rows, {"tf", "exla"}, 1e-8)
    for r in rows:
        assert 0 < float(r["rmse"]) < 1 and float(r["nlpd"]) < 1, r


def test_knn_smoke(tmp_path: Path) -> None:
    rows = _run("knn", tmp_path, "--backends", "tf", "exla")
    _check(rows, {"tf", "exla"}, 0.05)
    variants = {(r["dataset"], r["metric"], r["d"]) for r in rows}
    assert variants == {("uniform", "l2", "3"), ("uniform", "cosine", "10"),
                        ("digits", "l2", "64")}
    # Real data, really rewritten: the 1797 x 1797 x 64 broadcast is gone.
    digits = {r["backend"]: r for r in rows if r["dataset"] == "digits"}
    assert float(digits["exla"]["planned_temp_mb"]) < float(digits["tf"]["planned_temp_mb"]) / 100
    assert {r["limit_kind"] for r in rows if r["backend"] == "exla"} == {"threshold"}


def test_transformer_smoke(tmp_path: Path) -> None:
    rows = _run("transformer", tmp_path)
    _check(rows, {"tf", "exla"}, 1e-5)
    exla = next(r for r in rows if r["backend"] == "exla")
    assert float(exla["planned_temp_mb"]) < float(exla["planned_temp_plain_mb"])


def test_wide_mlp_smoke(tmp_path: Path) -> None:
    rows = _run("wide_mlp", tmp_path)
    _check(rows, {"tf", "exla"}, 1e-5)
    exla = next(r for r in rows if r["backend"] == "exla")
    assert float(exla["planned_temp_mb"]) < float(exla["planned_temp_plain_mb"]) / 2


def test_memory_limit_smoke(tmp_path: Path) -> None:
    # The program-level limit, as a user sets it (--xla_memory_limit in XLA_FLAGS).
    rows = _run("wide_mlp", tmp_path, "--memory-limits", "4MB")
    _check(rows, {"tf", "exla"}, 1e-5)
    plain = next(r for r in rows if r["backend"] == "tf")
    exla = next(r for r in rows if r["backend"] == "exla")
    assert (exla["limit"], exla["limit_kind"], plain["limit_kind"]) == ("4MB", "memory", "")
    # Plain XLA plans more than the limit; the executable exla's program ran
    # as (TensorFlow's XLA's buffer assignment of it) fits, as its search said.
    assert float(exla["planned_peak_mb"]) * 2**20 <= 4e6 < float(plain["planned_peak_mb"]) * 2**20
    assert float(exla["search_peak_mb"]) * 2**20 <= 4e6
    assert "fits" in exla["exla_plan"] and "loop" in exla["exla_plan"]


def test_knn_split_smoke(tmp_path: Path) -> None:
    rows = _run("knn_split", tmp_path, "--backends", "exla")
    _check(rows, {"exla"}, 0.05)
    # The split size sets the loop's chunks: 25 then 50 queries at a time.
    plans = {r["split_mb"]: r["exla_plan"] for r in rows}
    assert "20 chunks of 25" in plans["1"] and "10 chunks of 50" in plans["2"], plans


def test_memory_limit_script_smoke(tmp_path: Path) -> None:
    # experiments/workloads/memory_limit.py writes its own rows, read from what ran.
    import exla

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(Path(exla.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "experiments", "memory_limit", "--smoke",
                           "--repeats", "3", "--results-dir", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "memory_limit.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["workload"], row["status"], row["ran_rewritten"]) == ("attention", "ok", "yes"), row
    assert int(row["loops"]) > int(row["loops_plain"]) and row["planned_from"] == "executable", row
    # The executable that ran plans within the limit; plain XLA's does not.
    assert float(row["planned_peak_mb"]) * 2**20 <= 1e6 < float(row["planned_peak_plain_mb"]) * 2**20
    assert row["limit_met"] == "yes" and row["repeats"] == "3", row
    assert float(row["exla_time_min_s"]) <= float(row["exla_time_s"]) <= float(row["exla_time_max_s"])
    assert float(row["error"]) < 1e-4, row
    assert (tmp_path / "memory_limit.machine.json").exists()


def test_sgpr_scale_smoke(tmp_path: Path) -> None:
    # GPyTorch runs where torch is installed (the "peers" extra), not in CI.
    import importlib.util

    backends = ["tf", "exla", "svgp"] + (["gpytorch"] if importlib.util.find_spec("gpytorch") else [])
    rows = _run("sgpr_scale", tmp_path, "--backends", *backends)
    _check(rows, set(backends), 1e-8)
    by_backend = {r["backend"]: r for r in rows}
    for r in rows:
        assert 0 < float(r["rmse"]) < 1 and float(r["nlpd"]) < 1.5, r
        assert float(r["loss_final"]) < float(r["loss0"]), r  # the optimiser made progress
    # Every SGPR implementation starts from the same model (GPyTorch given
    # GPflow's jitter on K_uu): the same bound.
    if "gpytorch" in by_backend:
        ref = float(by_backend["tf"]["loss0"])
        assert abs(float(by_backend["gpytorch"]["loss0"]) - ref) <= 1e-6 * abs(ref)
    assert (tmp_path / "sgpr_scale.png").stat().st_size > 1000


def test_attention_script_smoke(tmp_path: Path) -> None:
    # experiments/workloads/attention.py at seq = 1,024 under a 24MB limit (plain XLA
    # plans 179 MB): exla's rewrite is what ran, within the limit, and every
    # JAX backend is as accurate as plain XLA against the float64 reference.
    import exla

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(Path(exla.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "experiments", "attention", "--seqs", "1024",
                           "--time-up-to", "1024", "--limit", "24MB", "--repeats", "1",
                           "--backends", "jax", "--results-dir", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "attention.csv", newline="") as f:
        rows = {r["backend"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"plain", "exla", "blocked"}
    plain, rewritten = rows["plain"], rows["exla"]
    assert (rewritten["status"], rewritten["ran_rewritten"]) == ("ok", "yes"), rewritten
    assert float(rewritten["planned_peak_mb"]) * 2**20 <= 24e6 < float(plain["planned_peak_mb"]) * 2**20
    assert int(rewritten["loops"]) > int(plain["loops"])
    for row in rows.values():
        assert float(row["error"]) <= 4 * float(plain["error"]) + 1e-7, row
        assert float(row["time_s"]) > 0 and row["repeats"] == "1", row


def test_attention_torch_row_says_when_torch_is_missing(monkeypatch) -> None:
    # Without the "peers" extra the run keeps its JAX rows and records why
    # PyTorch has none, instead of failing after the JAX backends ran.
    from experiments.workloads import attention

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    row = attention.torch_row(64, [], 1, None)
    assert (row["backend"], row["status"]) == ("torch", "not installed"), row
    assert "torch" in row["note"] and "time_s" not in row
