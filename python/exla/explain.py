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

from typing import Any, Callable

from exla._entry_settings import split_settings, takes_settings
from exla.explanation import Explanation

__all__ = ["explain", "Explanation"]


@takes_settings(keep_kwargs=True)
def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Explanation:
    """Runs exla's pipeline on ``fn`` for ``args``/``kwargs`` and reports what it did.

    Nothing is executed: the function is traced and lowered to HLO, the passes
    run, and XLA compiles the module before and after (for the CPU, through
    jaxlib) to give its planned temporary memory.

    Args:
      fn: an :func:`exla.function`, a ``tf.function``, a Python function (all
        TensorFlow), or an :func:`exla.jit` or ``jax.jit`` function (JAX).
      *args: the arguments of a call: tensors, NumPy arrays, ``tf.TensorSpec``
        (static shapes) or Python values.
      {SETTINGS}
      **kwargs: keyword arguments of the call (those that name a setting are
        the setting).

    A setting left None is ``fn``'s own (an :func:`exla.function` or
    :func:`exla.jit`), then its environment variable, ``EXLA_FLAGS``,
    ``XLA_FLAGS``. With ``memory_limit`` the report gives XLA's planned peak
    against the limit, the plan chosen and the candidates tried
    (``report.limit_plan``).

    Returns:
      An :class:`Explanation` (a :class:`exla.report.Report`); ``print`` it
      for a summary.

    Raises:
      Exception: whatever tracing, lowering or a pass raises: ``explain`` is a
        diagnostic tool and never hides a failure.

    >>> import tensorflow as tf, exla
    >>> big = tf.TensorSpec([2000, 3], tf.float32)
    >>> report = exla.explain(lambda x: tf.reduce_sum(tf.matmul(x, x, transpose_b=True)), big,
    ...                       threshold="1MB")
    >>> report.largest_tensor_bytes_before, report.largest_tensor_bytes_after <= 1_000_000
    (16000000, True)
    """
    settings, kwargs = split_settings(kwargs)
    # Each frontend imports its framework: only the function's own is loaded.
    if _is_jax_function(fn):
        from exla.jax.explain import explain_jax

        return explain_jax(fn, args, kwargs, settings)
    from exla.tensorflow import ExlaFunction

    if not isinstance(fn, ExlaFunction):
        fn = ExlaFunction(fn)
    return fn.explain(*args, **settings, **kwargs)


def _is_jax_function(fn: Any) -> bool:
    """A ``jax.jit`` function, :func:`exla.jit`'s included: an object of a jax or
    jaxlib type (read from its type, without importing jax)."""
    return type(fn).__module__.split(".")[0] in ("jax", "jaxlib")
