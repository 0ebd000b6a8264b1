"""kNN against KeOps, alternated in one process (experiments/workloads/knn_keops.py)."""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.harness.runner import append_rows
from experiments.workloads import knn_keops

ROOT = Path(__file__).resolve().parents[3]


def test_alternate_takes_turns_and_records_the_load() -> None:
    calls: list[str] = []
    records = knn_keops.alternate({"a": lambda: calls.append("a"),
                                   "b": lambda: calls.append("b")}, rounds=3)
    assert calls == ["a", "b"] * 3
    assert [(r["backend"], r["round"]) for r in records] == [
        (b, i) for i in range(3) for b in ("a", "b")]
    assert all(r["time_s"] >= 0 and r["load_before"] >= 0 and r["load_after"] >= 0
               for r in records)


def _row(limit: str, backend: str, time_s: float, run_id: str = "r2",
         fast_math: str = "no") -> dict:
    return {"run_id": run_id, "fast_math": fast_math, "n": 1000, "queries": 10, "d": 3, "k": 10, "limit": limit,
            "backend": backend, "time_s": time_s, "load_before": 1.0, "load_after": 1.5,
            "error": 0.0, "ran_rewritten": "yes" if backend == "exla" else "",
            "planned_peak_mb": 300.0 if backend == "exla" else ""}


def test_section_reads_the_newest_run_per_setting_and_limit(tmp_path: Path) -> None:
    rows = [_row("1GB", "exla", 100.0, run_id="r1"), _row("1GB", "keops", 1.0, run_id="r1")]
    rows += [_row(limit, backend, t) for limit in ("500MB", "1GB")
             for backend, t in (("exla", 3.0), ("keops", 2.0), ("exla", 5.0), ("keops", 4.0),
                                ("exla", 4.0), ("keops", 3.0))]
    # A KeOps row without the setting (as early runs wrote them) belongs to its run.
    rows += [_row("1GB", "exla", 1.0, "r0", "yes"), _row("1GB", "keops", 2.0, "r0", "")]
    append_rows(tmp_path / "knn_keops.csv", rows, knn_keops.COLUMNS)
    lines = knn_keops.knn_keops_section(tmp_path)
    table = [line.split(" | ") for line in lines if line.startswith("| 1000 |")]
    assert [cells[1:3] for cells in table] == [["500MB", "no"], ["1GB", "no"], ["1GB", "yes"]]
    # Medians 4 and 3 of the newest run (r1's 100 s is not in them): 1.33x.
    for cells in table[:2]:
        assert cells[3:7] == ["4 [3-5]", "3 [2-4]", "1.33", "3"], cells
    assert table[2][3:7] == ["1 [1-1]", "2 [2-2]", "0.5", "1"], table[2]


@pytest.mark.skipif(importlib.util.find_spec("pykeops") is None, reason="pykeops not installed")
def test_knn_keops_script_smoke(tmp_path: Path) -> None:
    # 200 queries against 20,000 points under 1MB (plain XLA holds 16 MB of
    # distances): exla's rewrite ran, both found the exact neighbours.
    import exla

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(Path(exla.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "experiments", "knn_keops", "--n", "20000",
                           "--queries", "200", "--limits", "1MB", "--repeats", "2",
                           "--results-dir", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "knn_keops.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["backend"] for r in rows] == ["exla", "keops"] * 2
    exla_rows = [r for r in rows if r["backend"] == "exla"]
    assert all(r["ran_rewritten"] == "yes" and int(r["loops"]) >= 1 for r in exla_rows), exla_rows
    assert float(exla_rows[0]["planned_peak_mb"]) * 2**20 <= 1e6
    assert all(float(r["error"]) <= 0.01 for r in rows), rows
