"""Whose compile gives XLA's figures for a plan: the backend that will run it.

exla's memory and cost models mirror XLA *CPU*'s pipeline (fusion, schedule,
buffer packing, kernel speeds of the CPU emitter). A memory-limit search ranks
plans with them on any backend, but the figure that decides whether a plan
fits is XLA's own buffer assignment, and that must come from the compiler
that will run the program: a GPU build fuses, schedules and packs buffers
differently. A :class:`Planner` compiles a module for one backend and returns
its :class:`~exla.bridge.xla.MemoryStats`.

By default the CPU planner is used (jaxlib's CPU client, the TensorFlow path
and :func:`exla.optimize_hlo`); the JAX frontend puts the backend of the
program it rewrites in force for the length of that rewrite
(:func:`planning_on`), so that on a GPU every candidate is compiled for the
GPU, never for the CPU.

>>> current().platform
'cpu'
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator, NamedTuple

from exla.bridge import xla

__all__ = ["Planner", "cpu", "current", "planning_on", "MODELLED_PLATFORM"]

MODELLED_PLATFORM = "cpu"
"""The XLA backend exla's memory and cost models mirror."""


class Planner(NamedTuple):
    """Compiles HLO text for one backend and returns XLA's planned memory.

    Attributes:
      platform: the backend's platform name ("cpu", "cuda", "rocm", ...).
      key: what distinguishes its figures in a cache (platform and devices).
      memory: ``memory(text) -> exla.bridge.xla.MemoryStats``.
    """

    platform: str
    key: str
    memory: Callable[[str], object]

    @property
    def modelled(self) -> bool:
        """Whether exla's models mirror this backend (XLA CPU)."""
        return self.platform == MODELLED_PLATFORM


def _cpu_memory(text: str) -> object:
    return xla.planned_memory(text)


def cpu() -> Planner:
    """XLA CPU through jaxlib's own client (sharded modules: one device's program)."""
    return Planner("cpu", "cpu", _cpu_memory)


_current: contextvars.ContextVar[Planner | None] = contextvars.ContextVar(
    "exla_planner", default=None)


def current() -> Planner:
    """The planner in force (the CPU's unless :func:`planning_on` says otherwise)."""
    return _current.get() or cpu()


@contextlib.contextmanager
def planning_on(planner: Planner) -> Iterator[Planner]:
    """Makes ``planner`` give XLA's figures inside the ``with`` block."""
    token = _current.set(planner)
    try:
        yield planner
    finally:
        _current.reset(token)
