"""What ran: the run-time markers of both frontends, for the tests of a rewrite.

A test of a rewrite must fail if exla silently fell back to the original
program (``EXLA_INJECT_FAILURE=noop`` is that fallback on purpose; see
``python -m experiments noop_run``). Under JAX the marker is the list of
programs XLA compiled from exla's rewrite (so JAX runs them); under
TensorFlow, the count the rewritten program keeps of its own runs.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

__all__ = ["jax_rewrites", "tf_runs"]


@contextlib.contextmanager
def jax_rewrites() -> Iterator[list[str]]:
    """The names of the programs JAX compiled from exla's rewrite inside the block.

    Recorded once XLA has compiled the rewritten module, so JAX runs it; a
    program exla fell back on is never listed (unlike a log line written
    when the rewrite is built).
    """
    from exla.jax import compile_hook

    before = len(compile_hook.rewritten_programs())
    names: list[str] = []
    yield names
    names.extend(compile_hook.rewritten_programs()[before:])


def tf_runs(function: Any) -> list[int]:
    """The run count of each rewritten program of an ``exla.function``, counted by the program."""
    return [p.runs for p in function.programs if p.rewritten]
