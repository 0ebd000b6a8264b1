"""experiments.harness.executed and the runner's verdict: figures of what ran."""

from __future__ import annotations

import os
import time
from pathlib import Path

from experiments.harness import executed
from experiments.harness.runner import _judge_rewrite

_SUFFIX = "_XlaMustCompile_true_config_proto_1_executor_type_2_.5.cpu_"
_PLAIN_HLO = "HloModule m\nENTRY %e (a: f32[4]) -> f32[4] {\n  ROOT %n = f32[4] negate(%a)\n}\n"
_EXLA_HLO = ('HloModule m\n  %w = (s32[], f32[4]) while(%t), condition=%c, body=%b, '
             'metadata={op_name="XlaCallModule/while"}\n')
_BUFFERS = ("allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
            "allocation 1: size 16, output shape is |f32[4]|, maybe-live-out:\n"
            "allocation 2: size 2097152, preallocated-temp:\n"
            "allocation 3: size 4, constant:\n")


def _module(folder: Path, number: int, name: str, hlo: str) -> None:
    stem = f"module_{number:04d}.a_inference_{name}__{_SUFFIX}"
    (folder / f"{stem}after_optimizations.txt").write_text(hlo)
    (folder / f"{stem}after_optimizations-buffer-assignment.txt").write_text(_BUFFERS)


def test_the_module_that_ran_is_read(tmp_path: Path) -> None:
    _module(tmp_path, 1, "kmv_12", _PLAIN_HLO)
    _module(tmp_path, 2, "exla_kmv_40", _EXLA_HLO)
    _module(tmp_path, 3, "other_kmv_7", _EXLA_HLO)  # another function: never read
    plain = executed.tf_executed(tmp_path, "kmv", exla=False)
    assert (plain["loops"], plain["planned_from"]) == (0, "executable")
    assert "ran_rewritten" not in plain
    assert plain["planned_peak_mb"] == (16 + 16 + 2097152) / 2**20
    exla = executed.tf_executed(tmp_path, "kmv", exla=True)
    assert (exla["loops"], exla["ran_rewritten"]) == (1, "yes")
    assert exla["planned_temp_mb"] == 2.0
    assert executed.tf_executed(tmp_path, "missing", exla=True) == {}


def test_an_exla_row_that_ran_the_original_is_a_fallback(tmp_path: Path) -> None:
    # exla's dispatcher compiled, then the original ran after a failure: the newest wins.
    _module(tmp_path, 1, "exla_kmv_40", _EXLA_HLO)
    later = time.time() + 5
    _module(tmp_path, 2, "kmv_12", _PLAIN_HLO)
    for path in tmp_path.glob("module_0002*"):
        os.utime(path, (later, later))
    row = {"backend": "exla", "status": "ok", "exla_rewrote": "yes",
           **executed.tf_executed(tmp_path, "kmv", exla=True)}
    assert (row["ran_rewritten"], row["loops"]) == ("no", 0)
    _judge_rewrite(row)
    assert row["status"] == "fallback" and "original" in row["note"]
    # exla chose to change nothing: ok, and ran_rewritten says what ran.
    unchanged = {"backend": "exla", "status": "ok", "exla_rewrote": "no", "ran_rewritten": "no"}
    _judge_rewrite(unchanged)
    assert unchanged["status"] == "ok"
