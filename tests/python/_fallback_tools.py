"""What the fallback tests of both frontends share (tests/python/tensorflow/test_fallback.py,
tests/python/jax/test_fallback.py)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from exla import _fault_injection

STAGES = _fault_injection.STAGES
# What the warning of each stage's failure quotes: exla's own message, or
# XLA's compile error naming the custom call exla injected.
QUOTED = {"optimize": "stage 'optimize'", "stablehlo": "stage 'stablehlo'",
          "compile": "exla_injected_failure"}


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "exla" and r.levelno == logging.WARNING]


def run_script(source: str, stages: list[str], env: dict, tmp_path) -> tuple[dict, str]:
    script = tmp_path / "script.py"
    script.write_text(source)
    result = subprocess.run([sys.executable, str(script), *stages], env=env,
                            capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1]), result.stderr
