"""The memory model's timeline: live memory at each step of XLA's schedule.

Exposed as :func:`exla.predict.predict_timeline`; kept apart from
:mod:`exla.predict` so that the picture (:mod:`exla._plot`) can read it
without the two modules importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exla import _core

if TYPE_CHECKING:
    from exla._exla import MemoryTimeline

__all__ = ["MemoryTimeline", "PeakBuffer", "predict_timeline"]

# MemoryTimeline and PeakBuffer (a buffer alive at the peak) are the C++
# model's records (model/xla_cpu_model.h, bound in cc/bindings/records.cc).
__getattr__ = _core.records("MemoryTimeline", "PeakBuffer")


def predict_timeline(hlo_text: str, max_named: int = 8) -> MemoryTimeline:
    """The memory model's live memory over XLA CPU's schedule of an HLO module.

    The steps are those of the model's sequential schedule of the module (one
    per instruction fusion does not fold away, and one where a while loop
    returns; a loop body appears once, as buffer assignment sees it). The
    planned peak is ``baseline_bytes + temp_bytes``: the heap after packing
    is at least the top of ``live_bytes``, often a little more (gaps no later
    buffer fits).

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

    Args:
      hlo_text: an HLO module as text.
      max_named: how many of the buffers alive at the peak to name.

    Raises:
      ValueError: the text is not a well-formed HLO module.
      exla.ExlaError: an internal error of exla's C++ core.
    """
    return _core.predict_timeline(hlo_text, max_named)
