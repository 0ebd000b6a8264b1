"""The machine and library versions recorded with every results file."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
from typing import Any

__all__ = ["machine_info", "commit"]

_PACKAGES = ("tensorflow", "jax", "jaxlib", "numpy", "gpflow", "pykeops", "exla", "scikit-learn")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _memory_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def commit() -> str:
    """The checkout's commit, or '' outside git.

    ``+dirty`` when the code that runs has uncommitted changes (exla's
    sources, the build files, the experiments' code); results and documents
    (which every run rewrites) do not count.
    """
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, text=True,
                              capture_output=True, timeout=10).stdout.strip()
        code = ["python", "cc", "setup.py", "pyproject.toml", ":(glob)experiments/**/*.py"]
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *code],
                               cwd=root, text=True, capture_output=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+dirty" if head and dirty else "")


def machine_info() -> dict[str, Any]:
    """Cores, memory, CPU, Python and package versions, the commit and the date."""
    versions: dict[str, str] = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "commit": commit(),
        "cores": os.cpu_count(),
        "memory_gb": round(_memory_bytes() / 2**30, 1),
        "cpu": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
    }
