"""Smoke runs of the experiments: the harness end to end on tiny sizes.

Each runs ``python -m experiments <name> --smoke`` into a temporary results
folder and checks the CSV rows: every configuration ran (status ``ok``), with
positive times, a plausible peak RSS and a small error against the reference.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


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
        assert 10 < float(r["peak_rss_mb"]) < 4096, r
        if r["error"]:
            assert float(r["error"]) <= max_error, r
    exla = [r for r in rows if r["backend"] == "exla"]
    assert exla and all(r["error"] for r in exla)


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
    # Plain XLA plans more than the limit; exla's plan, measured by its own search, fits.
    assert float(exla["planned_peak_mb"]) * 2**20 <= 4e6 < float(plain["planned_peak_mb"]) * 2**20
    assert "fits" in exla["exla_plan"] and "loop" in exla["exla_plan"]


def test_knn_split_smoke(tmp_path: Path) -> None:
    rows = _run("knn_split", tmp_path, "--backends", "exla")
    _check(rows, {"exla"}, 0.05)
    # The split size sets the loop's chunks: 25 then 50 queries at a time.
    plans = {r["split_mb"]: r["exla_plan"] for r in rows}
    assert "20 chunks of 25" in plans["1"] and "10 chunks of 50" in plans["2"], plans
