"""Hard memory caps for child processes through the Linux memory cgroup.

A :class:`MemoryCap` creates one cgroup per configuration (cgroup v1's
``memory`` controller or cgroup v2's unified hierarchy), sets its limit, and the
child joins it as its first action (:func:`join_from_env`). When the kernel
kills the child for exceeding the limit, :meth:`MemoryCap.oom_killed` says so.
Where no cgroup can be created (not root, no memory controller) the cap falls
back to *no cap* with a warning, so the experiments still run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

__all__ = ["MemoryCap", "join_from_env", "CGROUP_ENV"]

CGROUP_ENV = "EXLA_EXPERIMENT_CGROUP"
_V1_ROOT = Path("/sys/fs/cgroup/memory")
_V2_ROOT = Path("/sys/fs/cgroup")
_GROUP = "exla_experiments"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _v2_available() -> bool:
    controllers = _read(_V2_ROOT / "cgroup.controllers").split()
    return "memory" in controllers


class MemoryCap:
    """A memory cgroup limited to ``limit_bytes`` (or no cap, with a warning).

    Attributes:
      kind: ``"cgroup-v1"``, ``"cgroup-v2"`` or ``"none"``.
      path: the cgroup directory (None without a cap).
    """

    def __init__(self, limit_bytes: int, name: str) -> None:
        self.limit_bytes = int(limit_bytes)
        self.path: Path | None = None
        self.kind = "none"
        try:
            if (_V1_ROOT / "memory.limit_in_bytes").exists():
                parent = _V1_ROOT / _GROUP
                parent.mkdir(exist_ok=True)
                self.path = parent / name
                self.path.mkdir(exist_ok=True)
                _write(self.path / "memory.limit_in_bytes", str(self.limit_bytes))
                self.kind = "cgroup-v1"
            elif _v2_available():
                parent = _V2_ROOT / _GROUP
                parent.mkdir(exist_ok=True)
                if "memory" not in _read(parent / "cgroup.subtree_control").split():
                    _write(parent / "cgroup.subtree_control", "+memory")
                self.path = parent / name
                self.path.mkdir(exist_ok=True)
                _write(self.path / "memory.max", str(self.limit_bytes))
                if (self.path / "memory.swap.max").exists():
                    _write(self.path / "memory.swap.max", "0")
                self.kind = "cgroup-v2"
        except OSError as e:
            warnings.warn(f"no memory cgroup available ({e}); children run WITHOUT a memory cap",
                          stacklevel=2)
            self.path, self.kind = None, "none"
        if self.kind == "none" and self.path is None and not (_V1_ROOT.exists() or _v2_available()):
            warnings.warn("no memory cgroup controller found; children run WITHOUT a memory cap",
                          stacklevel=2)

    def child_env(self) -> dict[str, str]:
        """Environment entries that make the child join this cgroup."""
        return {CGROUP_ENV: str(self.path / "cgroup.procs")} if self.path else {}

    def peak_bytes(self) -> int | None:
        """The cgroup's peak usage (includes page cache), if the kernel reports it."""
        if self.path is None:
            return None
        name = "memory.max_usage_in_bytes" if self.kind == "cgroup-v1" else "memory.peak"
        text = _read(self.path / name).strip()
        return int(text) if text.isdigit() else None

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer acted or the limit was hit in this cgroup."""
        if self.path is None:
            return False
        if self.kind == "cgroup-v1":
            for line in _read(self.path / "memory.oom_control").splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                    return True
            failcnt = _read(self.path / "memory.failcnt").strip()
            return failcnt.isdigit() and int(failcnt) > 0
        for line in _read(self.path / "memory.events").splitlines():
            key, _, value = line.partition(" ")
            if key in ("oom_kill", "oom") and value.strip().isdigit() and int(value) > 0:
                return True
        return False

    def close(self) -> None:
        """Removes the (now empty) cgroup."""
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass


def join_from_env() -> None:
    """In the child: moves this process into the cgroup named by the parent."""
    procs = os.environ.get(CGROUP_ENV)
    if procs:
        _write(Path(procs), str(os.getpid()))
