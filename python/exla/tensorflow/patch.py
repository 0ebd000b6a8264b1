"""Routes every ``tf.function(jit_compile=True)`` through exla (the zero-code-change path).

:func:`install` replaces ``__call__`` of TensorFlow's polymorphic ``Function``
class. Patching the class, rather than ``tf.function``, also covers functions
created before the patch and those that libraries create themselves (Keras's
jit-compiled train step, GPflow's compiled losses). A call of a
``jit_compile=True`` function is handed to an :class:`exla.tensorflow.exla_function.ExlaFunction`
made once per function object; every other call, exla's own internal
functions, calls made while exla traces a function and calls nested inside an
XLA cluster (already part of an outer program exla rewrote) take TensorFlow's
own path. The original ``__call__`` stays reachable as ``__exla_original__`` on
the patched one (used by :func:`exla.tensorflow.tracing.call_unpatched`).

>>> import tensorflow as tf
>>> install()
>>> installed()
True
>>> uninstall(); installed()
False
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from typing import Any

from exla.bridge.tensorflow import function_class, in_xla_cluster
from exla.tensorflow.exla_function import ExlaFunction
from exla.tensorflow.tracing import exla_is_tracing

__all__ = ["install", "uninstall", "installed", "wrappers"]

_log = logging.getLogger("exla")
_lock = threading.Lock()
_WRAPPER_ATTRIBUTE = "_exla_function"
_wrappers: "weakref.WeakSet[Any]" = weakref.WeakSet()


def wrappers() -> list[Any]:
    """The :class:`exla.tensorflow.exla_function.ExlaFunction` of every live function the patch routed.

    Their ``programs`` say what exla did, and how often each rewritten program
    ran, for functions the user never wrapped (Keras's train step, GPflow's
    compiled losses).
    """
    with _lock:
        return list(_wrappers)


def installed() -> bool:
    """Whether TensorFlow's ``Function.__call__`` is patched."""
    return hasattr(function_class().__call__, "__exla_original__")


def _wrapper_for(function: Any) -> Any:
    wrapper = function.__dict__.get(_WRAPPER_ATTRIBUTE)
    if wrapper is None:
        name = getattr(function, "_name", None) or getattr(function, "__name__", None)
        wrapper = function.__dict__.setdefault(_WRAPPER_ATTRIBUTE, ExlaFunction(function, name=name))
        with _lock:
            _wrappers.add(wrapper)
    return wrapper


def install() -> None:
    """Patches ``Function.__call__`` (idempotent).

    Importing :mod:`exla.tensorflow` has checked that TensorFlow and jaxlib are
    versions exla supports.
    """
    cls = function_class()
    with _lock:
        if hasattr(cls.__call__, "__exla_original__"):
            return
        original = cls.__call__

        @functools.wraps(original)
        def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
            if (not getattr(self, "_jit_compile", False)
                    or getattr(self, "_exla_internal", False)
                    or exla_is_tracing()
                    or in_xla_cluster()):
                return original(self, *args, **kwargs)
            return _wrapper_for(self)(*args, **kwargs)

        __call__.__exla_original__ = original  # type: ignore[attr-defined]
        cls.__call__ = __call__
    _log.info("exla: every tf.function(jit_compile=True) now runs through exla")


def uninstall() -> None:
    """Restores TensorFlow's own ``Function.__call__``."""
    cls = function_class()
    with _lock:
        original = getattr(cls.__call__, "__exla_original__", None)
        if original is not None:
            cls.__call__ = original
