"""The memory model's timeline: live memory at each step of XLA's schedule.

Exposed as :func:`exla.predict.predict_timeline`; kept apart from
:mod:`exla.predict` so that the picture (:mod:`exla._plot`) can read it
without the two modules importing each other.
"""

from __future__ import annotations

import dataclasses

from exla import _core

__all__ = ["MemoryTimeline", "PeakBuffer", "predict_timeline"]


@dataclasses.dataclass(frozen=True)
class PeakBuffer:
    """One buffer of the heap of temporaries alive at a timeline's peak.

    Attributes:
      instruction: the instruction whose value the buffer holds at the peak
        (for a buffer a loop or an in-place update writes again, the latest
        writer by then).
      computation: the computation of that instruction (a loop body's for a
        buffer of a split loop).
      opcode: its opcode.
      shape: the array's shape (a tuple for a tuple's pointer table; empty
        for scratch).
      kind: ``"value"``, ``"tuple table"`` or ``"scratch"`` (memory an
        instruction's expansion holds while it runs).
      bytes: the buffer's size.
      start: the first schedule step at which it is alive.
      end: the last.
    """

    instruction: str
    computation: str
    opcode: str
    shape: str
    kind: str
    bytes: int
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class MemoryTimeline:
    """The memory model's intermediate bytes alive at each step of XLA's schedule.

    The steps are those of the model's sequential schedule of the module (one
    per instruction fusion does not fold away, and one where a while loop
    returns; a loop body appears once, as buffer assignment sees it).

    Attributes:
      baseline_bytes: arguments + outputs - aliased outputs + constants, which
        XLA counts as held for the whole run: the floor under every step.
      live_bytes: intermediate bytes alive at each step (index = step; step 0
        is before the first instruction). Its maximum is the model's
        ``MemoryPrediction.live_bytes``.
      instructions: the instruction that runs at each step (``""`` at step 0).
      peak_steps: every step at which ``live_bytes`` is at its maximum.
      peak_buffers: the largest buffers alive at the first peak step,
        largest first.
      temp_bytes: the heap after packing: at least the top of ``live_bytes``,
        often a little more (gaps no later buffer fits).
      live_peak_bytes: the top of ``live_bytes``.
      peak_bytes: the predicted planned peak, ``baseline_bytes + temp_bytes``
        (what :func:`predict_peak` returns).
      entry: the name of the entry computation.

    >>> import exla
    >>> hlo = '''HloModule m
    ...
    ... ENTRY e {
    ...   x = f32[512,4]{1,0} parameter(0)
    ...   v = f32[512,1]{1,0} parameter(1)
    ...   k = f32[512,512]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
    ...   ROOT kv = f32[512,1]{1,0} dot(k, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    ... }'''
    >>> t = exla.predict.predict_timeline(hlo)
    >>> t.instructions  # XLA CPU's order: breadth-first, both parameters before the dots
    ('', 'x', 'v', 'k', 'kv')
    >>> t.live_bytes  # k (1 MiB) is alive from its dot to the dot that reads it
    (0, 0, 0, 1048576, 1048576)
    >>> t.peak_steps, t.peak_buffers[0].instruction, t.peak_buffers[0].shape
    ((3, 4), 'k', 'f32[512,512]')
    >>> t.peak_bytes == t.baseline_bytes + t.temp_bytes == exla.predict_peak(hlo)
    True
    """

    baseline_bytes: int
    live_bytes: tuple[int, ...]
    instructions: tuple[str, ...]
    peak_steps: tuple[int, ...]
    peak_buffers: tuple[PeakBuffer, ...]
    temp_bytes: int
    live_peak_bytes: int
    peak_bytes: int
    entry: str = ""

    @property
    def steps(self) -> int:
        """The number of steps, step 0 included."""
        return len(self.live_bytes)

    @property
    def total_bytes(self) -> tuple[int, ...]:
        """``baseline_bytes + live_bytes`` at each step: what the process holds."""
        return tuple(self.baseline_bytes + b for b in self.live_bytes)


def predict_timeline(hlo_text: str, max_named: int = 8) -> MemoryTimeline:
    """The memory model's live memory over XLA CPU's schedule of an HLO module.

    Args:
      hlo_text: an HLO module as text.
      max_named: how many of the buffers alive at the peak to name.

    Raises:
      ValueError: the text is not a well-formed HLO module.
      exla.ExlaError: an internal error of exla's C++ core.
    """
    data = _core.predict_timeline(hlo_text, max_named)
    return MemoryTimeline(
        baseline_bytes=int(data["baseline_bytes"]),
        live_bytes=tuple(int(b) for b in data["live_bytes"]),
        instructions=tuple(data["instructions"]),
        peak_steps=tuple(int(s) for s in data["peak_steps"]),
        peak_buffers=tuple(PeakBuffer(**b) for b in data["peak_buffers"]),
        temp_bytes=int(data["temp_bytes"]),
        live_peak_bytes=int(data["live_peak_bytes"]),
        peak_bytes=int(data["peak_bytes"]),
        entry=str(data["entry"]))
