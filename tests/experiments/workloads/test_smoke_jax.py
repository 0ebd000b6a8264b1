"""Smoke runs of the JAX experiments (plain jax.jit vs the unchanged script with XLA_FLAGS)."""

from __future__ import annotations

from pathlib import Path

from tests.experiments.workloads.test_smoke import _check, _run


def test_jax_kernel_matvec_smoke(tmp_path: Path) -> None:
    rows = _run("jax_kernel_matvec", tmp_path)
    _check(rows, {"jax", "exla"}, 1e-10)
    exla = next(r for r in rows if r["backend"] == "exla")
    assert exla["exla_path"] == "flags"  # XLA fuses the smoke size whole: no memory claim here
    assert exla["loops"] == "1" and exla["loops_plain"] == "0"  # exla's loop, in what ran


def test_jax_wide_mlp_smoke(tmp_path: Path) -> None:
    rows = _run("jax_wide_mlp", tmp_path)
    _check(rows, {"jax", "exla"}, 1e-4)
    exla = next(r for r in rows if r["backend"] == "exla")
    assert float(exla["planned_temp_mb"]) < float(exla["planned_temp_plain_mb"]) / 2


def test_jax_sharded_smoke(tmp_path: Path) -> None:
    rows = _run("jax_sharded", tmp_path)
    _check(rows, {"jax", "exla"}, 1e-4)
    assert {r["workload"] for r in rows} == {"kernel_matvec", "knn", "mlp"}
    for r in rows:
        assert r["devices"] == "8", r
    kmv = next(r for r in rows if r["backend"] == "exla" and r["workload"] == "kernel_matvec")
    assert float(kmv["planned_total_mb"]) < float(kmv["planned_total_plain_mb"]) / 2
    assert kmv["collectives_in_loops"] == "0"
