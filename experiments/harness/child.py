"""Child side of the harness: ``python -m experiments.harness.child MODULE CONFIG RESULT``.

The parent has put it in its memory cgroup already; it calls ``MODULE.run(config, recorder)``.
The :class:`Recorder` rewrites the result JSON after every update, so what was
measured before an out-of-memory kill (e.g. XLA's planned memory) survives it.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable


__all__ = ["Recorder", "measure", "record_times", "current_rss_mb", "peak_rss_so_far_mb"]


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def current_rss_mb() -> float:
    """This process's resident set size now, in MiB."""
    return _status_mb("VmRSS")


def peak_rss_so_far_mb() -> float:
    """This process's largest resident set size so far, in MiB (``VmHWM``)."""
    return _status_mb("VmHWM")


class Recorder:
    """Accumulates a child's result fields and writes them to JSON on each update."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fields: dict[str, Any] = {}

    def update(self, **fields: Any) -> None:
        """Adds fields and rewrites the result file."""
        self.fields.update(fields)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.fields, default=str))
        os.replace(tmp, self.path)


def measure(call: Callable[[], Any], recorder: Recorder, *, repeats: int = 3,
            budget_s: float = 60.0) -> Any:
    """Times ``call``: the first call (compilation included), then ``repeats`` timed calls.

    Records ``time_s`` (the median of the timed calls), ``time_min_s``,
    ``time_max_s`` and ``repeats`` (how many were timed). Timed calls stop
    early, after at least one, once they have taken ``budget_s`` seconds in
    all (a run of minutes is timed once; the row says so). Returns the last
    call's result.
    """
    recorder.update(base_rss_mb=current_rss_mb())
    start = time.perf_counter()
    result = call()
    first = time.perf_counter() - start
    recorder.update(first_call_s=first)
    times: list[float] = []
    while len(times) < max(1, repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
        record_times(recorder, times)
        if sum(times) > budget_s:
            break
    return result


def record_times(recorder: Recorder, times: list[float]) -> None:
    """The timing columns of a row from its timed calls (seconds)."""
    recorder.update(time_s=statistics.median(times), time_min_s=min(times),
                    time_max_s=max(times), repeats=len(times))


def main(argv: list[str]) -> int:
    module_name, config_json, result_path = argv
    if os.environ.get("EXLA_EXPERIMENT_PATH") == "flags":
        # Running from a checkout, the .pth line pip installs is not on the
        # path: do what it does (a no-op when it already ran).
        importlib.import_module("exla._autoload").install()
    config = json.loads(config_json)
    recorder = Recorder(Path(result_path))
    warnings = _ExlaWarnings()
    logging.getLogger("exla").addHandler(warnings)
    module = importlib.import_module(module_name)
    module.run(config, recorder)
    if config.get("backend") == "exla" and warnings.fallbacks:
        # exla gave up and ran the original program: what was measured is not exla.
        recorder.update(status="fallback", note=warnings.fallbacks[0][:300])
    else:
        recorder.update(status="ok")
    return 0


class _ExlaWarnings(logging.Handler):
    """Collects exla's warnings that it fell back to the original program."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.fallbacks: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "running the original" in message or "running without exla" in message:
            self.fallbacks.append(message)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
