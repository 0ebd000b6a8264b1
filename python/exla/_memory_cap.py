"""Runs a child process under a hard memory cap (Linux cgroups).

A program that needs more memory than the machine has would otherwise swap or
take the machine down before failing. Under a cgroup memory limit the kernel
kills it as soon as it crosses the cap, and the parent can report "out of
memory" cleanly. cgroup v2 (`memory.max`) and v1 (`memory.limit_in_bytes`) are
supported; this needs permission to create cgroups (root on most machines).
Where that is not possible the child runs with an address-space limit
(`RLIMIT_AS`) instead, which is coarser, and a warning says so.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pathlib
import resource
import signal
import subprocess
import time
import uuid
from typing import Mapping, Sequence

_log = logging.getLogger("exla")

_V2_ROOT = pathlib.Path("/sys/fs/cgroup")
_V1_ROOT = pathlib.Path("/sys/fs/cgroup/memory")


_OUT_OF_MEMORY_MARKERS = (
    "ResourceExhaustedError", "RESOURCE_EXHAUSTED", "Out of memory", "MemoryError", "bad_alloc",
)


@dataclasses.dataclass(frozen=True)
class CappedRun:
    """Outcome of :func:`run_capped`."""

    returncode: int
    out_of_memory: bool
    peak_bytes: int | None  # peak memory of the child's cgroup, if known
    seconds: float
    stdout: str
    stderr: str
    mechanism: str  # "cgroup v2", "cgroup v1" or "rlimit"


class _Cgroup:
    def __init__(self, limit_bytes: int) -> None:
        name = f"exla-{uuid.uuid4().hex[:12]}"
        if (_V2_ROOT / "cgroup.controllers").exists():
            self.path = _V2_ROOT / name
            self.path.mkdir()
            (self.path / "memory.max").write_text(str(limit_bytes))
            if (self.path / "memory.swap.max").exists():
                (self.path / "memory.swap.max").write_text("0")
            self.mechanism = "cgroup v2"
        else:
            self.path = _V1_ROOT / name
            self.path.mkdir()
            (self.path / "memory.limit_in_bytes").write_text(str(limit_bytes))
            swap = self.path / "memory.memsw.limit_in_bytes"
            if swap.exists():
                try:
                    swap.write_text(str(limit_bytes))
                except OSError:
                    pass
            self.mechanism = "cgroup v1"

    def add_self(self) -> None:
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_bytes(self) -> int | None:
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            f = self.path / name
            if f.exists():
                return int(f.read_text().split()[0])
        return None

    def oom_killed(self) -> bool:
        events = self.path / "memory.events"
        if events.exists():
            fields = dict(line.split() for line in events.read_text().splitlines())
            return int(fields.get("oom_kill", 0)) > 0
        control = self.path / "memory.oom_control"
        if control.exists():
            fields = dict(line.split() for line in control.read_text().splitlines())
            return int(fields.get("oom_kill", 0)) > 0
        return False

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass


def _make_cgroup(limit_bytes: int) -> _Cgroup | None:
    try:
        return _Cgroup(limit_bytes)
    except OSError as error:
        _log.warning("cannot create a cgroup (%s); capping address space instead", error)
        return None


def run_capped(argv: Sequence[str], limit_bytes: int, *, env: Mapping[str, str] | None = None,
               timeout: float | None = None) -> CappedRun:
    """Runs ``argv`` with at most ``limit_bytes`` of memory and reports how it ended.

    >>> import sys
    >>> run = run_capped([sys.executable, "-c", "print(6 * 7)"], 2 * 2**30)
    >>> run.returncode, run.stdout.strip(), run.out_of_memory
    (0, '42', False)
    """
    cgroup = _make_cgroup(limit_bytes)

    def enter_cap() -> None:
        if cgroup is not None:
            cgroup.add_self()
        else:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    start = time.perf_counter()
    try:
        process = subprocess.run(list(argv), env=dict(env) if env is not None else None,
                                 preexec_fn=enter_cap, capture_output=True, text=True,
                                 timeout=timeout)
        seconds = time.perf_counter() - start
        killed = process.returncode == -signal.SIGKILL
        # Killed by the kernel at the cap, or an allocation the runtime
        # itself refused (XLA checks sizes against available memory first).
        out_of_memory = killed or (cgroup is not None and cgroup.oom_killed()) or any(
            marker in process.stderr for marker in _OUT_OF_MEMORY_MARKERS)
        return CappedRun(
            returncode=process.returncode,
            out_of_memory=out_of_memory,
            peak_bytes=cgroup.peak_bytes() if cgroup is not None else None,
            seconds=seconds,
            stdout=process.stdout,
            stderr=process.stderr,
            mechanism=cgroup.mechanism if cgroup is not None else "rlimit",
        )
    finally:
        if cgroup is not None:
            cgroup.remove()
