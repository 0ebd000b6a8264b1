"""``exla.explain``: what exla does to a TensorFlow function, without running it.

>>> import numpy as np, tensorflow as tf, exla
>>> def kernel_matvec(x, v):
...     k = tf.exp(-tf.matmul(x, x, transpose_b=True))  # 1000 x 1000
...     return tf.linalg.matvec(k, v)
>>> x = np.random.rand(1000, 3); v = np.random.rand(1000)
>>> report = exla.explain(kernel_matvec, x, v, threshold="100KB")
>>> report.rewritten, "tensor-splitter" in report.changed_passes
(True, True)
>>> report.largest_tensor_bytes_before, report.largest_tensor_bytes_after <= 100_000
(8000000, True)
>>> report.planned_temp_bytes_before >= 8_000_000, report.planned_temp_bytes_after < 1_000_000
(True, True)
>>> print(report)  # doctest: +ELLIPSIS
exla.explain(kernel_matvec) on CPU for (1000, 3) float64, (1000,) float64
exla runs the rewritten program; time in exla ...
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Callable, Sequence

from exla.options import format_size
from exla.report import Report

__all__ = ["explain", "Explanation"]

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
      hlo_before: the module as TensorFlow lowered it.
      hlo_after: the module exla would run (``hlo_before`` when unchanged).
      lowering_seconds: TensorFlow tracing and lowering to HLO.
      conversion_seconds: HLO -> StableHLO portable artifact (0 if unchanged).
      exla_seconds: lowering + passes + conversion: the first-call cost of
        exla for this signature (planned memory excluded).
      planned_memory_error: why XLA's planned memory is missing, if it is.
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


def explain(fn: Callable[..., Any], *args: Any, threshold: int | str | None = None,
            split_size: int | str | None = None, passes: Sequence[str] | None = None,
            **kwargs: Any) -> Explanation:
    """Runs exla's pipeline on ``fn`` for ``args``/``kwargs`` and reports what it did.

    Nothing is executed: the function is traced and lowered to HLO, the passes
    run, and XLA compiles the module before and after (for the CPU, through
    jaxlib) to give its planned temporary memory.

    Args:
      fn: an :func:`exla.function`, a ``tf.function``, a Python function (all
        TensorFlow), or an :func:`exla.jit` or ``jax.jit`` function (JAX).
      *args: the arguments of a call: tensors, NumPy arrays, ``tf.TensorSpec``
        (static shapes) or Python values.
      threshold: as :func:`exla.function`; default: ``fn``'s own setting, then
        ``EXLA_FLAGS``/``XLA_FLAGS``.
      split_size: as :func:`exla.function`.
      passes: as :func:`exla.function`.
      **kwargs: keyword arguments of the call.

    Returns:
      An :class:`Explanation` (a :class:`exla.report.Report`); ``print`` it
      for a summary.

    Raises:
      Exception: whatever tracing, lowering or a pass raises: ``explain`` is a
        diagnostic tool and never hides a failure.
    """
    from exla import _jax_explain

    if _jax_explain.is_jax_function(fn):  # exla.jit / jax.jit: see exla._jax_explain
        return _jax_explain.explain_jax(fn, args, kwargs, threshold=threshold,
                                        split_size=split_size, passes=passes)
    import tensorflow as tf

    from exla import _tf_program
    from exla.function import ExlaFunction
    from exla.optimize import optimize_hlo

    if isinstance(fn, ExlaFunction):
        overrides = {k: v for k, v in (("threshold", threshold), ("split_size", split_size),
                                       ("passes", passes)) if v is not None}
        options = fn.options().replace(**overrides) if overrides else fn.options()
        exla_fn = fn
    else:
        exla_fn = ExlaFunction(fn, threshold=threshold, split_size=split_size, passes=passes)
        options = exla_fn.options()
    name = getattr(exla_fn.python_function, "__name__", "function")

    start = time.perf_counter()
    concrete, flat_specs, platform = exla_fn.lower(args, kwargs)
    with tf.init_scope():
        text = _tf_program.extract_hlo(concrete, flat_specs, platform)
    lowered = time.perf_counter()

    def optimize(planned_memory: bool) -> tuple[str, Report]:
        return optimize_hlo(text, threshold=options.threshold, split_size=options.split_size,
                            passes=options.passes, dump_dir=options.dump_dir,
                            planned_memory=planned_memory)

    planned_error = None
    try:
        after, report = optimize(True)
    except (ValueError, RuntimeError) as exc:
        planned_error = str(exc)
        _log.warning("exla.explain(%s): XLA's planned memory is unavailable: %s", name, exc)
        after, report = optimize(False)
    rewritten = _tf_program.pass_changed_module(report)
    conversion = 0.0
    if rewritten:
        from exla.bridge import xla as bridge

        t0 = time.perf_counter()
        bridge.text_to_portable_artifact(after)
        conversion = time.perf_counter() - t0
    explanation = Explanation(**{f.name: getattr(report, f.name) for f in dataclasses.fields(Report)})
    explanation.function = name
    explanation.platform = platform
    explanation.inputs = [(tuple(s.shape.as_list()), s.dtype.name) for s in flat_specs]
    explanation.rewritten = rewritten
    explanation.hlo_before = text
    explanation.hlo_after = after if rewritten else text
    explanation.lowering_seconds = lowered - start
    explanation.conversion_seconds = conversion
    explanation.exla_seconds = explanation.lowering_seconds + report.seconds + conversion
    explanation.planned_memory_error = planned_error
    return explanation
