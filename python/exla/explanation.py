"""What :func:`exla.explain` reports on one signature of a function, and how it is made.

One feature in three layers: :mod:`exla.explain` is the entry point, which
hands a function to its frontend; the frontends (:mod:`exla.tensorflow.explain`,
:mod:`exla.jax.explain`) lower it to HLO for the call; this module runs
exla's passes on that HLO and makes the :class:`Explanation`. The frontends
import this module, never the entry point, which imports them.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any, Callable

from exla.errors import ExlaError
from exla.memory_limit import runtime_memory
from exla.optimize import optimize_hlo
from exla.options import Options, format_size
from exla.predict import plot_memory, predict_peak
from exla.report import Report

if TYPE_CHECKING:  # matplotlib is imported only when a picture is drawn
    from matplotlib.figure import Figure

__all__ = ["Explanation", "explain_text"]

_log = logging.getLogger("exla")


@dataclasses.dataclass
class Explanation(Report):
    """A :class:`exla.report.Report` for one signature of a function, with its context.

    Attributes (beyond those of :class:`~exla.report.Report`):
      function: the function's name.
      platform: where the program would run (``CPU``, ``CUDA``...).
      inputs: static shapes and dtypes of the flat inputs.
      rewritten: whether exla would run the rewritten program (a pass other
        than the clean-ups changed the module), or the original.
      hlo_before: the module as the frontend (TensorFlow or JAX) lowered it.
      hlo_after: the module exla would run (``hlo_before`` when unchanged).
      lowering_seconds: the frontend's tracing and lowering to HLO.
      conversion_seconds: HLO -> what the frontend runs (TensorFlow: a StableHLO
        portable artifact; JAX: StableHLO), 0 if unchanged.
      exla_seconds: lowering + passes + conversion: the first-call cost of
        exla for this signature (planned memory excluded).
      planned_memory_error: why XLA's planned memory is missing, if it is.

    >>> import tensorflow as tf, exla
    >>> e = exla.explain(lambda x: tf.reduce_sum(x * x), tf.TensorSpec([8], tf.float32))
    >>> e.inputs, e.rewritten, e.hlo_after == e.hlo_before
    ([((8,), 'float32')], False, True)
    """

    function: str = ""
    platform: str = ""
    inputs: list[tuple[tuple[int, ...], str]] = dataclasses.field(default_factory=list)
    rewritten: bool = False
    hlo_before: str = ""
    hlo_after: str = ""
    lowering_seconds: float = 0.0
    conversion_seconds: float = 0.0
    exla_seconds: float = 0.0
    planned_memory_error: str | None = None

    def __str__(self) -> str:
        inputs = ", ".join(f"{shape} {dtype}" for shape, dtype in self.inputs) or "no inputs"
        verdict = "runs the rewritten program" if self.rewritten else "runs the original program"
        lines = [
            f"exla.explain({self.function}) on {self.platform} for {inputs}",
            f"exla {verdict}; time in exla {self.exla_seconds * 1e3:.1f} ms (lowering "
            f"{self.lowering_seconds * 1e3:.1f} ms, passes {self.seconds * 1e3:.1f} ms, "
            f"conversion {self.conversion_seconds * 1e3:.1f} ms)",
            super().__str__(),
        ]
        if self.planned_memory_error:
            lines.append(f"planned memory unavailable: {self.planned_memory_error}")
        if self.threshold and self.planned_temp_bytes_after is not None:
            lines.append(f"planned temp memory after vs threshold: "
                         f"{format_size(self.planned_temp_bytes_after)} / {format_size(self.threshold)}")
        return "\n".join(lines)

    def plot(self, path: str | None = None) -> "Figure":
        """Draws the program's memory over its schedule before and after exla.

        One panel per program (only one when exla leaves it unchanged), from
        exla's memory model of ``hlo_before`` and ``hlo_after`` (nothing is
        compiled again): the memory held at each step, the predicted planned
        peak, ``memory_limit`` as a red line when one was set, and the largest
        tensors at each peak named (see :func:`exla.predict.plot_memory`).

        Args:
          path: where to write the picture (PNG, SVG or PDF, from the suffix).

        Returns:
          The ``matplotlib.figure.Figure``.

        Raises:
          ImportError: matplotlib is not installed.

        >>> import tensorflow as tf, exla
        >>> big = tf.TensorSpec([2000, 3], tf.float32)
        >>> e = exla.explain(lambda x: tf.reduce_sum(tf.matmul(x, x, transpose_b=True)), big,
        ...                  threshold="1MB")
        >>> figure = e.plot()  # e.plot("memory.png") also writes it
        >>> [ax.get_title(loc="left").split(":")[0] for ax in figure.axes]
        ['before exla', 'after exla']
        """
        after = self.hlo_after if self.rewritten else None
        title = f"exla.explain({self.function})" + ("" if self.rewritten else ": left unchanged")
        return plot_memory(self.hlo_before, after, memory_limit=self.memory_limit, title=title, path=path)


def explain_text(name: str, text: str, options: Options, *, platform: str,
                 inputs: list[tuple[tuple[int, ...], str]], lowering_seconds: float,
                 convert: Callable[[str], Any], framework: str,
                 start_runtime: Callable[[], None] | None = None) -> Explanation:
    """Runs the passes on a lowered program and reports; shared by the TensorFlow and JAX paths.

    ``convert`` is the frontend's conversion of the rewritten text into what
    it runs (timed as part of exla's cost, its result dropped); ``framework``
    (``"tensorflow"`` or ``"jax"``) names the runtime whose fixed cost a
    memory-limit report states, and ``start_runtime`` starts it
    (:func:`exla.memory_limit.runtime_memory.measure`).
    """
    def optimize(planned_memory: bool) -> tuple[str, Report]:
        return optimize_hlo(text, planned_memory=planned_memory, **options.keywords())

    planned_error = None
    try:
        after, report = optimize(True)
    except ExlaError:
        raise  # strict: the limit or threshold cannot be met
    except (ValueError, RuntimeError) as exc:
        if options.memory_limit is not None:
            raise  # the limit needs XLA's planned memory: no report without it
        planned_error = str(exc)
        _log.warning("exla.explain(%s): XLA's planned memory is unavailable: %s", name, exc)
        after, report = optimize(False)
    runtime_memory.attach(report, framework, start_runtime)
    rewritten = report.rewrote_program
    conversion = 0.0
    if rewritten:
        t0 = time.perf_counter()
        convert(after)
        conversion = time.perf_counter() - t0
    explanation = Explanation(**{f.name: getattr(report, f.name) for f in dataclasses.fields(Report)})
    explanation.function = name
    explanation.platform = platform
    explanation.inputs = inputs
    explanation.rewritten = rewritten
    explanation.hlo_before = text
    explanation.hlo_after = after if rewritten else text
    explanation.lowering_seconds = lowering_seconds
    explanation.conversion_seconds = conversion
    explanation.exla_seconds = lowering_seconds + report.seconds + conversion
    explanation.planned_memory_error = planned_error
    explanation.predicted_peak_bytes = _predicted_peaks(name, text, explanation.hlo_after)
    return explanation


def _predicted_peaks(name: str, before: str, after: str) -> tuple[int, int] | None:
    """The memory model's peak of the module before and after, or None (logged) if it fails."""
    try:
        return predict_peak(before), predict_peak(after)
    except (ValueError, ExlaError) as exc:
        _log.warning("exla.explain(%s): the memory model has no prediction: %s", name, exc)
        return None
