"""The framework's fixed runtime cost: what a process holds besides a program's plan.

A memory limit bounds XLA's planned peak of one program (its buffer
assignment: arguments, outputs, temporaries, constants). The process that
runs it holds more: the Python interpreter, the framework's libraries and
runtime, exla's own planning compilations (jaxlib), and whatever data the
process keeps. A hard cap on the process (a cgroup, a container's memory
limit) must leave room for that; this module measures it once per process
so that a report can state it beside the plan.

What is measured (:func:`measure`), on Linux from ``/proc/self/status``:

* ``resident_bytes``: the process's resident size (``VmRSS``) at the moment
  of measuring, which is the end of the first memory-limited optimisation in
  the process: the interpreter, the framework as imported, exla and jaxlib
  after the limit search's compilations, and whatever the process held then
  (its data included; program arguments already in memory are thus counted
  here and in the plan, which errs on the side of a larger cap).
* ``runtime_bytes`` (TensorFlow only): the growth of ``VmRSS`` from compiling
  and running a trivial ``tf.function(jit_compile=True)`` (the frontend's
  ``start_runtime``): TensorFlow's own XLA compiler and runtime (a copy
  separate from jaxlib's), which appear when the first jit-compiled program
  runs. JAX shares jaxlib's XLA, which the limit search has already started,
  so nothing is added for it.

The sum, :attr:`RuntimeCost.fixed_bytes`, is the process's fixed cost: a cap
of ``memory_limit + fixed_bytes`` plus a margin (10%) holds a process that
runs the rewritten program. Cost of measuring: reading ``/proc/self/status``
twice and, for TensorFlow, one trivial XLA compilation (about 0.1-0.2 s),
once per process, and only when a memory limit is set.
"""

from __future__ import annotations

import ctypes
import dataclasses
import logging
import os
import threading
import time
from typing import Any, Callable, TypeVar

from exla.options import format_size

__all__ = ["RuntimeCost", "measure", "attach", "SearchResidue", "around_search"]

_T = TypeVar("_T")

_log = logging.getLogger("exla")

_NAMES = {"tensorflow": "TensorFlow", "jax": "JAX"}
_measured: dict[tuple[int, str], "RuntimeCost"] = {}  # (pid, framework) -> cost
_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class RuntimeCost:
    """The process's fixed cost beside a plan (see the module doc for what is measured).

    Attributes:
      framework: ``"TensorFlow"`` or ``"JAX"``.
      resident_bytes: ``VmRSS`` when measured.
      runtime_bytes: ``VmRSS`` growth of compiling and running a trivial jit
        program (0 for JAX).
      seconds: the time measuring took.
    """

    framework: str
    resident_bytes: int
    runtime_bytes: int
    seconds: float

    @property
    def fixed_bytes(self) -> int:
        """What the process holds besides the program's plan."""
        return self.resident_bytes + self.runtime_bytes

    def summary(self) -> str:
        """One line for a report."""
        runtime = (f", {format_size(self.runtime_bytes)} to compile and run a jit program"
                   if self.framework == "TensorFlow" else "")
        return (f"the process holds about {format_size(self.fixed_bytes)} more: "
                f"{self.framework}'s runtime, measured once in this process (resident "
                f"{format_size(self.resident_bytes)}{runtime}; {self.seconds:.2f} s)")


def _status_bytes(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def measure(framework: str, start_runtime: Callable[[], None] | None = None) -> RuntimeCost:
    """The fixed cost of ``framework`` (``"tensorflow"`` or ``"jax"``) in this process.

    ``start_runtime`` starts the framework's own XLA runtime (the TensorFlow
    frontend's compiles and runs a trivial program), whose growth of the
    resident size is ``runtime_bytes``; None where the framework shares
    jaxlib's XLA (JAX). Measured on the first call in a process, then cached
    (a forked child measures again).

    Raises:
      OSError: no ``/proc/self/status`` (not Linux).
    """
    key = (os.getpid(), framework)
    with _lock:
        if key not in _measured:
            start = time.perf_counter()
            resident = _status_bytes("VmRSS")
            runtime = 0
            if start_runtime is not None:
                start_runtime()
                runtime = max(0, _status_bytes("VmRSS") - resident)
            _measured[key] = RuntimeCost(_NAMES[framework], resident, runtime,
                                         time.perf_counter() - start)
            _log.debug("exla: %s", _measured[key].summary())
        return _measured[key]


def attach(report: Any, framework: str, start_runtime: Callable[[], None] | None = None) -> None:
    """Sets ``report.limit_plan.runtime_cost`` (:func:`measure`) when a memory limit was searched.

    A failure to measure is logged and leaves the field None: it never
    stops the program.
    """
    plan = getattr(report, "limit_plan", None)
    if plan is None:
        return
    try:
        plan.runtime_cost = measure(framework, start_runtime)
    except Exception as error:  # noqa: BLE001 - a diagnostic must not break the program
        _log.debug("exla: the fixed runtime cost was not measured: %s", error)


@dataclasses.dataclass(frozen=True)
class SearchResidue:
    """What one memory-limit search left resident in the process (``VmRSS``).

    The search's XLA compilations (jaxlib's, LLVM's) free what they
    allocate, but glibc's allocator keeps the freed pages: GPflow SGPR at
    M = 2,000 under 400MB grew the process by 134 MB in one compile, of
    which 22 MB stayed after the release (2026-11-28; ``gc.collect`` freed
    nothing). exla holds no compiled program (its cache keeps XLA's figures
    only), so the search ends by handing the free pages back
    (``malloc_trim``, where glibc has it).

    Attributes:
      before_bytes: resident size when the search began.
      searched_bytes: when it ended, before the release.
      kept_bytes: after the release.
      seconds: the time the release took.
    """

    before_bytes: int
    searched_bytes: int
    kept_bytes: int
    seconds: float

    @property
    def growth_bytes(self) -> int:
        """exla's own resident growth: what the search left after the release (0 when
        the release returned more than the search took: memory others had freed)."""
        return max(0, self.kept_bytes - self.before_bytes)

    def summary(self) -> str:
        """One line for a report."""
        return (f"exla's search left {format_size(self.growth_bytes)} resident in the process "
                f"({format_size(self.before_bytes)} before, {format_size(self.searched_bytes)} "
                f"at its end, {format_size(self.kept_bytes)} after returning free memory "
                f"in {self.seconds * 1e3:.0f} ms)")


def _release_free_memory() -> None:
    """Returns the allocator's free pages to the system (glibc's ``malloc_trim``;
    nothing elsewhere)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)


def around_search(search: Callable[[], _T]) -> tuple[_T, SearchResidue | None]:
    """Runs ``search``, then releases what it freed (also when it raises); returns
    its result and what it left resident (None where ``/proc`` cannot say)."""
    try:
        before = _status_bytes("VmRSS")
    except OSError:
        before = None
    try:
        result = search()
    finally:
        searched = _status_bytes("VmRSS") if before is not None else 0
        start = time.perf_counter()
        try:
            _release_free_memory()
        except OSError as error:
            _log.debug("exla: free memory not released: %s", error)
        seconds = time.perf_counter() - start
    if before is None:
        return result, None
    return result, SearchResidue(before, searched, _status_bytes("VmRSS"), seconds)
