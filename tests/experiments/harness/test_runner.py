"""experiments.harness.runner: outcomes of capped children, classified and measured."""

from __future__ import annotations

import pytest

from exla.memory_cap import make_cgroup
from experiments.harness import runner

_MODULE = "tests.experiments.harness._toy_experiment"
_MIB = 2**20


def _run(config: dict, cap_mb: int = 2048, timeout_s: float = 120) -> dict:
    return runner.run_one(_MODULE, config, cap_mb * _MIB, timeout_s, {})


def test_a_child_within_its_cap_is_ok_and_its_rss_is_measured(monkeypatch):
    # The machine's load when the child starts, then when it ends.
    loads = iter([(1.5, 0.0, 0.0), (3.0, 0.0, 0.0)])
    monkeypatch.setattr(runner.os, "getloadavg", lambda: next(loads))
    row = _run({"mode": "allocate", "mb": 200})
    assert row["status"] == "ok", row
    assert row["error"] == 0.0 and row["time_s"] == 0.25
    # 200 MiB touched. (ru_maxrss survives exec, so a large forking parent, such
    # as a pytest process that loaded TensorFlow, can raise it: no upper bound.)
    assert row["peak_rss_mb"] > 200, row
    assert row["load_avg"] == "1.5/3.0"
    if row["cgroup_peak_mb"] != "":
        assert 200 < row["cgroup_peak_mb"] < 600, row


@pytest.mark.needs_cgroup
def test_a_child_over_its_cap_is_out_of_memory_and_keeps_what_it_recorded():
    row = _run({"mode": "allocate", "mb": 1024}, cap_mb=256)
    assert row["status"] == "OOM", row
    assert row["planned_temp_mb"] == 1.5
    assert row["cgroup_peak_mb"] <= 256 + 1, row


def test_a_child_past_its_time_limit_is_a_timeout():
    row = _run({"mode": "sleep"}, timeout_s=3)
    assert row["status"] == "TIMEOUT", row


def test_a_failing_child_is_an_error_with_its_message():
    row = _run({"mode": "raise"})
    assert row["status"] == "error"
    assert "the toy experiment failed on purpose" in row["note"]


@pytest.mark.needs_cgroup
def test_the_cap_mechanism_probe_leaves_no_cgroup_behind():
    cgroup = make_cgroup(64 * _MIB)
    cgroup.remove()
    parent = cgroup.path.parent
    before = {p.name for p in parent.iterdir() if p.is_dir()}
    assert runner._cap_mechanism(64 * _MIB) == cgroup.mechanism
    assert {p.name for p in parent.iterdir() if p.is_dir()} == before


def test_new_columns_extend_an_old_file_and_keep_its_rows(tmp_path):
    path = tmp_path / "x.csv"
    runner.append_rows(path, [{"backend": "tf", "limit": ""}], ["backend", "limit"])
    runner.append_rows(path, [{"backend": "exla", "limit": "3GB", "limit_kind": "memory"}],
                       ["backend", "limit", "limit_kind"])
    assert runner.read_rows(path) == [
        {"backend": "tf", "limit": "", "limit_kind": ""},
        {"backend": "exla", "limit": "3GB", "limit_kind": "memory"}]
