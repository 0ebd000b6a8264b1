"""The pytest process's own resident memory, followed test by test.

A test that runs exla under a cap starts a child under a memory cgroup; the
pytest process beside it must stay well under the machine's memory for that
child's cap to mean anything on a 24 GB CI machine (issue 43.7). The run's
summary states the process's peak and the tests that raised it most, so a
regression is visible in every CI log, not only when the machine runs out.

What grew it (measured 2026-11-29 over `make test`'s suite: 6.67 GiB peak,
5 GiB still resident after tests/passes/test_tensor_splitter.py) is mostly
memory already freed: eager TensorFlow references over 20k x 50k distances,
XLA compiles of 100 MB modules, whose pages glibc's allocator keeps in its
arenas. `release_process_memory` runs after each test module: it drops
jax's compiled-program caches (tests never reuse another module's) and hands
the free pages back.

The figures are the harness's (experiments/harness/child.py: VmRSS and
VmHWM). ``EXLA_TEST_RESIDENT_LOG=path`` also writes one line per test (resident bytes
after it, the peak so far, its node id) for a closer look.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from dataclasses import dataclass, field
from typing import Callable

from experiments.harness.child import current_rss_mb, peak_rss_so_far_mb

__all__ = ["ResidentTracker", "current_resident_bytes", "peak_resident_bytes",
           "release_process_memory"]

_LOG_VARIABLE = "EXLA_TEST_RESIDENT_LOG"
# Rises below this are page-granularity noise, not worth naming.
_NOTABLE_RISE = 64 * 2**20


def current_resident_bytes() -> int:
    """This process's resident set now (``VmRSS``), in bytes."""
    return int(current_rss_mb() * 2**20)


def peak_resident_bytes() -> int:
    """This process's largest resident set so far (``VmHWM``), in bytes."""
    return int(peak_rss_so_far_mb() * 2**20)


def release_process_memory() -> None:
    """Frees what finished tests left: jax's caches of compiled programs (if jax
    is loaded), unreachable objects, then the allocator's free pages (glibc's
    ``malloc_trim``; nothing elsewhere)."""
    jax = sys.modules.get("jax")
    if jax is not None and hasattr(jax, "clear_caches"):
        jax.clear_caches()
    gc.collect()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)


@dataclass
class ResidentTracker:
    """Which tests raised the process's peak resident memory, and by how much."""

    read_peak: Callable[[], int] = peak_resident_bytes
    raises: list[tuple[int, str]] = field(default_factory=list)
    _peak: int = -1
    _log_path: str | None = field(default_factory=lambda: os.environ.get(_LOG_VARIABLE))

    def __post_init__(self) -> None:
        self._peak = self.read_peak()

    def after_test(self, nodeid: str) -> None:
        """Records how far `nodeid` raised the peak (nothing if it did not)."""
        peak = self.read_peak()
        if peak > self._peak:
            self.raises.append((peak - self._peak, nodeid))
        self._peak = max(self._peak, peak)
        if self._log_path:
            with open(self._log_path, "a") as log:
                log.write(f"{current_resident_bytes()} {peak} {nodeid}\n")

    def summary(self, largest: int = 3) -> str:
        """One line: the peak and the tests that raised it the most."""
        top = [r for r in sorted(self.raises, reverse=True) if r[0] >= _NOTABLE_RISE][:largest]
        steps = ", ".join(f"{nodeid} +{raised / 2**30:.2f} GiB" for raised, nodeid in top)
        return (f"pytest process peak resident memory: {self._peak / 2**30:.2f} GiB"
                + (f" (largest rises: {steps})" if steps else ""))
