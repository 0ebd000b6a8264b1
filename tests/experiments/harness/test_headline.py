"""The README's headline table credits exla only with rows where exla's program ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.harness.headline import headline_table, replace_block, summary_table
from experiments.harness.runner import COMMON_COLUMNS, append_rows

_BASE = {"experiment": "sgpr", "cap_gb": "4", "n_train": "20000", "iterations": "1",
         "limit_kind": "", "limit": "", "peak_rss_mb": "2048", "repeats": "3"}


def _row(backend: str, m: int, time_s: float, run: str, **extra: str) -> dict:
    row = {**_BASE, "backend": backend, "m": str(m), "time_s": str(time_s), "run_id": run,
           "status": "ok", "planned_from": "executable", "planned_peak_mb": "1024"}
    if backend == "exla":
        row.update(limit="2GB", limit_kind="memory")
    row.update(extra)
    return row


def test_unchanged_and_unrecorded_rows_are_not_credited(tmp_path: Path) -> None:
    rows = [
        _row("tf", 1000, 4.0, "20261125-100000"),
        _row("exla", 1000, 3.0, "20261125-100000", ran_rewritten="no"),  # exla changed nothing
        _row("tf", 2000, 10.0, "20261125-100000"),
        _row("exla", 2000, 11.0, "20261125-100000", ran_rewritten="yes"),
        _row("tf", 3000, 0.0, "20261125-100000", status="OOM"),
        _row("exla", 3000, 30.0, "20261124-100000", planned_from="", ran_rewritten=""),  # old row
    ]
    append_rows(tmp_path / "sgpr.csv", rows, COMMON_COLUMNS + ["m", "n_train", "iterations"])
    (line,) = [l for l in headline_table(tmp_path) if l.startswith("| GPflow SGPR")]
    assert "1.10× at 2,000" in line and "at 1,000" not in line.split("|")[4]
    assert "exla changed nothing (plain XLA's program ran) at M = 1,000" in line
    assert "M = 3,000" in line and "not re-run" in line and "(OOM at 3,000)" in line
    (short,) = [l for l in summary_table(tmp_path) if l.startswith("| GPflow SGPR")]
    # Only the size where exla's program ran is exla's; its one ratio is of one run.
    assert short.split(" | ")[1:] == [
        "M = 2,000 (OOM at 3,000)", "M = 2,000, 2.00 GiB peak RSS (M = 3,000 in a run of "
        "2026-11-24, which did not record what ran)", "1.10×", "— |"]


def test_a_block_is_replaced_between_its_markers() -> None:
    text = "intro\n<!-- t:start -->\nold table\n<!-- t:end -->\nrest\n"
    assert replace_block(text, "t", ["| new |"]) == (
        "intro\n<!-- t:start -->\n| new |\n<!-- t:end -->\nrest\n")
    with pytest.raises(ValueError, match="no <!-- u:start -->"):
        replace_block(text, "u", [])


def test_a_workload_without_the_headline_series(tmp_path: Path) -> None:
    # A smoke run's exla rows use another limit: the row still renders.
    rows = [_row("tf", 40, 1.0, "20261125-100000"),
            _row("exla", 40, 1.0, "20261125-100000", ran_rewritten="yes", limit="100KB",
                 limit_kind="threshold")]
    append_rows(tmp_path / "sgpr.csv", rows, COMMON_COLUMNS + ["m", "n_train", "iterations"])
    (line,) = [l for l in headline_table(tmp_path) if l.startswith("| GPflow SGPR")]
    assert "M = 40" in line and "| — |" in line


def test_an_exla_series_of_several_limits_reads_as_one(tmp_path: Path) -> None:
    # sgpr_scale's exla rows ran under 6GB, then 5GB at larger M: both count.
    scale = {"experiment": "sgpr_scale", "cap_gb": "8", "n_train": "278319", "n_test": "69580",
             "iterations": "3", "svgp_epochs": "1"}
    rows = [_row("tf", 400, 30.0, "20261126-100000", **scale),
            _row("exla", 1000, 80.0, "20261126-100000", ran_rewritten="yes", limit="6GB", **scale),
            _row("exla", 2000, 600.0, "20261127-100000", ran_rewritten="yes", limit="5GB",
                 status="TIMEOUT", **scale),
            _row("exla", 3000, 900.0, "20261127-100000", ran_rewritten="yes", limit="4GB", **scale)]
    append_rows(tmp_path / "sgpr_scale.csv", rows,
                COMMON_COLUMNS + ["m", "n_train", "n_test", "iterations", "svgp_epochs"])
    (line,) = [l for l in headline_table(tmp_path) if l.startswith("| GPflow SGPR, N = 278")]
    exla_cell = line.split("|")[3]
    assert "M = 1,000" in exla_cell and "TIMEOUT at 2,000" in exla_cell
    assert "3,000" not in exla_cell  # a limit outside the headline's series


def test_the_cgroup_peak_stands_beside_the_rss(tmp_path: Path) -> None:
    # SGPR M = 6,000 under the 4 GiB cap: 4.32 GiB RSS, 3.85 GiB charged to the cgroup.
    rows = [_row("tf", 2000, 40.0, "20261127-100000"),
            _row("exla", 6000, 690.0, "20261127-100000", ran_rewritten="yes",
                 peak_rss_mb="4420", cgroup_peak_mb="3946")]
    append_rows(tmp_path / "sgpr.csv", rows, COMMON_COLUMNS + ["m", "n_train", "iterations"])
    (line,) = [l for l in headline_table(tmp_path) if l.startswith("| GPflow SGPR")]
    assert "M = 6,000, 4.32 GiB peak RSS (3.85 GiB cgroup peak)" in line.split("|")[3]
    assert "cgroup" not in line.split("|")[2]  # plain XLA's cell is unchanged


def test_rows_under_another_cap_stay_out_of_the_headline(tmp_path: Path) -> None:
    # An uncapped plain run beside a memory limit reaches a size that plain XLA
    # cannot reach under the headline's cap: it must not read as if it did.
    rows = [_row("tf", 2000, 10.0, "20261125-100000"),
            _row("exla", 2000, 11.0, "20261125-100000", ran_rewritten="yes"),
            _row("tf", 3000, 0.0, "20261125-100000", status="OOM"),
            _row("tf", 5000, 121.0, "20261128-100000", cap_gb="14"),
            _row("exla", 5000, 167.0, "20261128-100000", cap_gb="14", ran_rewritten="yes",
                 limit="1600MB")]
    append_rows(tmp_path / "sgpr.csv", rows, COMMON_COLUMNS + ["m", "n_train", "iterations"])
    (short,) = [l for l in summary_table(tmp_path) if l.startswith("| GPflow SGPR")]
    assert short.split(" | ")[:3] == ["| GPflow SGPR, N = 20,000 (4 GiB)", "M = 2,000 (OOM at 3,000)",
                                      "M = 2,000, 2.00 GiB peak RSS"]
    (line,) = [l for l in headline_table(tmp_path) if l.startswith("| GPflow SGPR")]
    assert "5,000" not in line
