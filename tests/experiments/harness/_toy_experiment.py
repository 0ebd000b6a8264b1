"""A tiny experiment module for the harness tests: its config says how it ends."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from experiments.harness.child import Recorder, current_rss_mb


def run(config: dict[str, Any], recorder: Recorder) -> None:
    recorder.update(planned_temp_mb=1.5)  # recorded before any failure, so it must survive one
    mode = config["mode"]
    if mode == "allocate":
        block = np.ones(config["mb"] * 2**17)  # float64: 2**17 values per MiB
        recorder.update(time_s=0.25, first_call_s=0.5, error=float(block.sum() - block.size),
                        base_rss_mb=current_rss_mb())
    elif mode == "sleep":
        time.sleep(60)
    elif mode == "raise":
        raise ValueError("the toy experiment failed on purpose")
