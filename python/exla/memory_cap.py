"""Runs a child process under a hard memory cap (Linux cgroups).

A program that needs more memory than the machine has would otherwise swap or
take the machine down before failing. Under a cgroup memory limit the kernel
kills it as soon as it crosses the cap, and the parent can report "out of
memory" cleanly. cgroup v2 (``memory.max``) and v1 (``memory.limit_in_bytes``)
are supported; this needs permission to create cgroups (root on most machines).
Where that is not possible :func:`run_capped` gives the child an address-space
limit (``RLIMIT_AS``) instead, which is coarser, and a warning says so.

:func:`run_capped` runs one command under a cap; :class:`Cgroup` (or
:func:`make_cgroup`) is for callers that start their children themselves, such
as the repository's experiment harness.

>>> import sys
>>> from exla.memory_cap import run_capped
>>> run_capped([sys.executable, "-c", "print('ok')"], 2 * 2**30).stdout.strip()
'ok'
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

__all__ = ["CappedRun", "Cgroup", "make_cgroup", "run_capped"]

_log = logging.getLogger("exla")

_V2_ROOT = pathlib.Path("/sys/fs/cgroup")
_V1_ROOT = pathlib.Path("/sys/fs/cgroup/memory")
# Every cgroup exla makes lives under one parent, so a leftover is easy to find.
_PARENT = "exla"


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


def _counters(path: pathlib.Path) -> dict[str, int]:
    """The ``key value`` lines of a cgroup file such as ``memory.events``."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            fields[key] = int(value)
    return fields


def _v2_has_memory_controller() -> bool:
    try:
        return "memory" in (_V2_ROOT / "cgroup.controllers").read_text().split()
    except OSError:
        return False


class Cgroup:
    """A fresh memory cgroup limited to ``limit_bytes``; raises ``OSError`` if none can be made.

    A process joins it with :meth:`add_self` (typically as a child's
    ``preexec_fn``); :meth:`remove` deletes it once its processes have ended.
    """

    def __init__(self, limit_bytes: int) -> None:
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        if (_V1_ROOT / "memory.limit_in_bytes").exists():
            parent = _V1_ROOT / _PARENT
            parent.mkdir(exist_ok=True)
            self.path = parent / name
            self.path.mkdir()
            self.mechanism = "cgroup v1"
            self._write("memory.limit_in_bytes", limit_bytes)
            # Without swap accounting the limit already covers all the memory.
            self._write("memory.memsw.limit_in_bytes", limit_bytes, optional=True)
        elif _v2_has_memory_controller():
            parent = _V2_ROOT / _PARENT
            parent.mkdir(exist_ok=True)
            # A v2 cgroup gets a memory limit only if its parent delegates the controller.
            if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+memory")
            self.path = parent / name
            self.path.mkdir()
            self.mechanism = "cgroup v2"
            self._write("memory.max", limit_bytes)
            self._write("memory.swap.max", 0, optional=True)
        else:
            raise OSError("no memory cgroup controller is mounted under /sys/fs/cgroup")

    def _write(self, name: str, value: int, *, optional: bool = False) -> None:
        try:
            (self.path / name).write_text(str(value))
        except OSError:
            if not optional:
                self.remove()
                raise

    def add_self(self) -> None:
        """Moves the calling process into this cgroup."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_bytes(self) -> int | None:
        """Peak memory use of the cgroup (page cache included), if the kernel reports it."""
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                return int((self.path / name).read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        return None

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of this cgroup for crossing the limit."""
        if self.mechanism == "cgroup v2":
            return _counters(self.path / "memory.events").get("oom_kill", 0) > 0
        control = _counters(self.path / "memory.oom_control")
        if "oom_kill" in control:
            return control["oom_kill"] > 0
        # Older v1 kernels do not count kills: fall back to "the limit was hit".
        try:
            return int((self.path / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def remove(self) -> None:
        """Deletes the cgroup (the kernel refuses while a process is still in it)."""
        try:
            self.path.rmdir()
        except OSError:
            pass


def make_cgroup(limit_bytes: int) -> Cgroup | None:
    """A :class:`Cgroup` limited to ``limit_bytes``, or None (with a warning) where none can be made."""
    try:
        return Cgroup(limit_bytes)
    except OSError as error:
        _log.warning("cannot create a memory cgroup (%s)", error)
        return None


def run_capped(argv: Sequence[str], limit_bytes: int, *, env: Mapping[str, str] | None = None,
               timeout: float | None = None) -> CappedRun:
    """Runs ``argv`` with at most ``limit_bytes`` of memory and reports how it ended.

    >>> import sys
    >>> run = run_capped([sys.executable, "-c", "print(6 * 7)"], 2 * 2**30)
    >>> run.returncode, run.stdout.strip(), run.out_of_memory
    (0, '42', False)
    """
    cgroup = make_cgroup(limit_bytes)
    if cgroup is None:
        _log.warning("capping the child's address space instead (RLIMIT_AS)")

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
