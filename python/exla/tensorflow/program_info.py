"""``ProgramInfo``: what exla did for one input signature of an :func:`exla.function`.

>>> import tensorflow as tf, exla
>>> square = exla.function(lambda x: x * x)
>>> _ = square(tf.constant([1.0, 2.0]))
>>> (info,) = square.programs
>>> info.inputs, info.rewritten, info.platform in ("CPU", "CUDA", "ROCM", "TPU")
((((2,), 'float32'),), False, True)
"""

from __future__ import annotations

import dataclasses

from exla.report import Report

__all__ = ["ProgramInfo"]


@dataclasses.dataclass(frozen=True)
class ProgramInfo:
    """exla's result for one input signature of a function.

    Attributes:
      name: the function's name.
      platform: where the program runs (``CPU``, ``CUDA``, ``ROCM`` or ``TPU``).
      inputs: ``(shape, dtype name)`` of each flat input, in call order.
      rewritten: whether exla runs the rewritten program (a pass other than the
        clean-ups changed it); when False the original function runs.
      report: the pipeline's :class:`exla.Report` (passes, sizes, timings).
      variables_written: names of the variables the program assigns.
      seconds: time exla spent on this signature (lowering, passes, conversion).
      runs: how many times the rewritten program ran, counted by the program
        itself (a variable it increments), so 0 whenever the original ran
        instead, e.g. after a failure exla fell back from.

    >>> import tensorflow as tf, exla
    >>> f = exla.function(lambda x: tf.reduce_sum(x))
    >>> _ = f(tf.ones([3]))
    >>> f.programs[0].name, f.programs[0].report.changed_passes
    ('<lambda>', [])
    """

    name: str
    platform: str
    inputs: tuple[tuple[tuple[int, ...], str], ...]
    rewritten: bool
    report: Report
    variables_written: tuple[str, ...]
    seconds: float
    runs: int = 0

    @property
    def changed(self) -> bool:
        """Same as :attr:`rewritten`."""
        return self.rewritten
