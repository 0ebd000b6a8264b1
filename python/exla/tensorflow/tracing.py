"""How exla traces TensorFlow functions: contexts, markers and small helpers.

* :func:`eager_context` traces a user's function in the eager context (out of
  any graph being built), as ``tf.init_scope()`` does, but with gradient tapes
  left recording, as TensorFlow's own tracing leaves them.
* :func:`exla_tracing` marks the thread while exla traces user code, so that
  jit functions nested in it run as they are (the outer program is rewritten
  as a whole); :func:`exla_is_tracing` reads the mark.
* :func:`mark_internal` and :func:`call_unpatched` keep exla's autoload patch
  of ``tf.function`` away from exla's own functions.

>>> exla_is_tracing()
False
>>> with exla_tracing():
...     exla_is_tracing()
True
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import tensorflow as tf

from exla.bridge.tensorflow import tape_recording_resumed

__all__ = [
    "eager_context", "exla_tracing", "exla_is_tracing", "call_unpatched", "mark_internal",
    "not_converted", "spec_of", "is_tensor", "differentiable",
]

_state = threading.local()


@contextlib.contextmanager
def exla_tracing() -> Iterator[None]:
    """Marks that exla itself is tracing user code on this thread."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def exla_is_tracing() -> bool:
    """Whether the current thread is inside exla's own tracing of a function."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def eager_context() -> Iterator[None]:
    """``tf.init_scope()`` with gradient recording left on.

    init_scope pauses every gradient tape of the thread, including the tapes a
    user's function creates while exla traces it (a loss-and-gradients
    function would trace to ``None`` gradients); TensorFlow's own tracing does
    not pause them, so neither does exla's.
    """
    with tf.init_scope(), tape_recording_resumed():
        yield


def call_unpatched(tf_function: Any, args: Sequence[Any], kwargs: dict) -> Any:
    """Calls a ``tf.function`` with TensorFlow's own ``__call__``, bypassing exla's autoload patch."""
    original = getattr(type(tf_function).__call__, "__exla_original__", None)
    if original is not None:
        return original(tf_function, *args, **kwargs)
    return tf_function(*args, **kwargs)


def mark_internal(tf_function: Any) -> Any:
    """Marks a ``tf.function`` as exla's own, so that exla's autoload patch leaves it alone."""
    tf_function._exla_internal = True
    return tf_function


def not_converted(method: Callable[..., Any]) -> Callable[..., Any]:
    """Tells AutoGraph to call ``method`` as it is.

    This is the mark ``tf.autograph.experimental.do_not_convert`` leaves; it
    keeps exla's dispatch logic from being converted when a user's
    ``tf.function`` calls an exla function.
    """
    method.autograph_info__ = {}  # type: ignore[attr-defined]
    return method


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a ``tf.Tensor`` (eager or symbolic)."""
    return isinstance(value, tf.Tensor)


def differentiable(dtype: Any) -> bool:
    """Whether TensorFlow computes gradients for tensors of ``dtype``.

    >>> import tensorflow as tf
    >>> differentiable(tf.float32), differentiable(tf.int32)
    (True, False)
    """
    return dtype.is_floating or dtype.is_complex


def spec_of(value: Any) -> Any:
    """A ``tf.TensorSpec`` for a tensor or NumPy array, the value itself otherwise.

    >>> import numpy as np
    >>> spec_of(np.zeros((2, 3), np.float32)), spec_of(1.5)
    (TensorSpec(shape=(2, 3), dtype=tf.float32, name=None), 1.5)
    """
    if is_tensor(value):
        return tf.TensorSpec(value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        return tf.TensorSpec(value.shape, tf.as_dtype(value.dtype))
    return value
