"""Predicting XLA's planned memory and running time without compiling.

XLA's CPU compiler decides a program's memory in three steps: fusion (which
intermediate values are written out), a sequential schedule, and buffer
assignment (values whose lives do not overlap share memory). exla's C++ core
mirrors the three on its own IR (``cc/model/``), so a module's planned
peak (arguments + outputs - aliased outputs + temporaries + constants) is
known in microseconds instead of one XLA compilation.

Both models mirror XLA *CPU* (the pipeline of the oldest supported jaxlib,
0.7.1, against which they are calibrated: newer XLA CPUs plan within a few
percent on the corpus). On a GPU or TPU they still rank plans, but a
memory limit's plans are confirmed by compiling for the backend that runs
them (:mod:`exla.memory_limit.planner`), and reports say so.

>>> import exla
>>> hlo = '''HloModule m
...
... ENTRY e {
...   x = f32[64,32]{1,0} parameter(0)
...   y = f32[32,16]{1,0} parameter(1)
...   ex = f32[64,32]{1,0} exponential(x)
...   ROOT d = f32[64,16]{1,0} dot(ex, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
... }'''
>>> exla.predict_peak(hlo)  # 8 KB + 2 KB arguments, 4 KB output, the 8 KB exponential
22528
>>> exla.predict.predict_memory(hlo).temp_bytes
8192

exla's cost model (``cc/model/cost/cost_model.cc``) predicts the time the module
takes on this machine's CPU, from its arithmetic and the bytes its kernels
move, with rates calibrated by ``experiments/calibrate_cost.py``:

>>> cost = exla.predict.predict_cost(hlo)
>>> cost.flops, cost.dot_flops  # 2048 exponentials, 64 x 16 x 32 multiply-adds
(67584, 65536)
>>> cost.kernels, cost.bytes    # exp: 8 KB in, 8 KB out; dot: 8 + 2 KB in, 4 KB out
(2, 30720)
>>> 0 < exla.predict_time(hlo) < 1e-3
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exla import _core, _plot
from exla._timeline import predict_timeline

if TYPE_CHECKING:  # matplotlib is imported only when a picture is drawn
    from matplotlib.figure import Figure

    from exla._exla import MemoryPrediction, TimePrediction

__all__ = ["MemoryPrediction", "MemoryTimeline", "PeakBuffer", "plot_memory", "predict_memory",
           "predict_peak", "predict_timeline", "LoopTime", "TimePrediction", "predict_cost",
           "predict_time"]

# The results are the C++ model's own records, read-only (model/xla_cpu_model.h,
# bound in cc/bindings/records.cc, where each field is described): help() on
# each class lists its fields.
__getattr__ = _core.records("MemoryPrediction", "MemoryTimeline", "PeakBuffer", "LoopTime",
                            "TimePrediction")


def predict_memory(hlo_text: str) -> MemoryPrediction:
    """Predicts every figure of XLA CPU's buffer assignment of an HLO module.

    Raises:
      ValueError: the text is not a well-formed HLO module.
      exla.ExlaError: an internal error of exla's C++ core.
    """
    return _core.predict_memory(hlo_text)


def predict_peak(hlo_text: str) -> int:
    """Predicts the memory XLA's CPU backend plans for an HLO module, in bytes.

    The figure is what the program makes the process hold: arguments, outputs
    not aliased to arguments, the heap of temporaries and the constants the
    executable embeds, the same figure a ``memory_limit`` bounds. Nothing is
    compiled; see ``experiments/results/memory_model.csv`` for how close the
    prediction comes to XLA's own buffer assignment.

    Args:
      hlo_text: an HLO module as text (as ``jax.jit(f).lower(...).as_text("hlo")``
        or exla's own lowering gives it).

    Returns:
      The predicted peak in bytes.

    Raises:
      ValueError: the text is not a well-formed HLO module.

    >>> import exla
    >>> exla.predict_peak("HloModule m\\n\\nENTRY e {\\n  x = f32[256]{0} parameter(0)\\n"
    ...                   "  ROOT y = f32[256]{0} exponential(x)\\n}")
    2048
    """
    return predict_memory(hlo_text).peak_bytes


def plot_memory(before: str, after: str | None = None, *, memory_limit: int | str | None = None,
                title: str | None = None, path: str | None = None) -> "Figure":
    """Draws the memory model's live memory over the schedule of a module, and of its rewrite.

    One panel per module (``before``, then ``after`` when given), each over its
    own schedule steps: the memory the process holds at each step (the
    baseline of arguments, outputs and constants shaded), the predicted
    planned peak (the packed heap, a little above the curve's top) dotted,
    ``memory_limit`` as a red line, and the largest tensors at the peak named.
    Needs matplotlib (``pip install matplotlib``); draws without pyplot, so
    no window opens and no global figure is kept.

    Args:
      before: HLO text of the module (as given to exla).
      after: HLO text of its rewrite, if any.
      memory_limit: a limit to draw, in bytes or as a size (``"300MB"``).
      title: the figure's title.
      path: where to write the picture (its format from the suffix, e.g. PNG).

    Returns:
      The ``matplotlib.figure.Figure``.

    Raises:
      ValueError: a text is not a well-formed HLO module, or a bad size.
      ImportError: matplotlib is not installed.
    """
    return _plot.plot_programs(before, after, memory_limit=memory_limit, title=title, path=path)


def predict_cost(hlo_text: str) -> TimePrediction:
    """Predicts the time XLA's CPU backend takes to run an HLO module, with its breakdown.

    Each kernel XLA runs (an instruction with a buffer of its own and the
    producers fused into it) takes the longer of its arithmetic and its memory
    traffic, plus a launch overhead; a loop costs its body once per trip.
    The rates are this machine's, calibrated by ``experiments/calibrate_cost.py``
    (``cc/model/cost/cost_constants.h``).

    Raises:
      ValueError: the text is not a well-formed HLO module.
      exla.ExlaError: an internal error of exla's C++ core.
    """
    return _core.predict_time(hlo_text)


def predict_time(hlo_text: str) -> float:
    """Predicts the seconds one run of an HLO module takes on XLA's CPU backend.

    Plans of the same program are ranked by this figure (the memory-limit
    search does); how well it orders measured times is in
    ``experiments/RESULTS.md``. Nothing is compiled or run.

    Raises:
      ValueError: the text is not a well-formed HLO module.

    >>> import exla
    >>> exla.predict_time("HloModule m\\n\\nENTRY e {\\n  x = f32[256]{0} parameter(0)\\n"
    ...                   "  ROOT y = f32[256]{0} exponential(x)\\n}") > 0
    True
    """
    return predict_cost(hlo_text).seconds
