"""The one module of exla that uses TensorFlow's private API (``tensorflow.python``).

exla routes ``tf.function(jit_compile=True)`` through itself and runs the
rewritten program inside TensorFlow's own graph. A handful of things that
needs are not in TensorFlow's public API: the class every ``tf.function`` is
an instance of (patched by :mod:`exla.tensorflow.patch`), whether a graph is
part of an XLA cluster, the gradient tape's per-thread pause, the HLO of a
concrete function for a given platform, and a resource variable made without
``tf.Variable``'s creator scope. They are all reached here, by name, so a
TensorFlow release that moves one fails in one place with one message that
names the release and the missing piece, instead of an AttributeError deep
inside a user's call or a silent fallback on every program.

TensorFlow is imported on first use: this module imports without it.

>>> from exla.bridge import tensorflow as tf_bridge
>>> tf_bridge.function_class().__name__
'Function'
>>> tf_bridge.in_xla_cluster()
False
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, Sequence

__all__ = ["function_class", "in_xla_cluster", "eager_device_name", "tape_recording_resumed",
           "mark_variable_accessed", "hlo_generator", "untracked_resource_variable",
           "check_private_api"]

# The attributes of TensorFlow's private modules that exla uses, by module.
_PRIVATE_API = {
    "polymorphic_function": ("Function",),
    "compiler_ir": ("from_concrete_function",),
    "context": ("context",),
    "ops": ("get_default_graph",),
    "control_flow_util": ("GraphOrParentsInXlaContext",),
    "resource_variable_ops": ("ResourceVariable", "variable_accessed"),
    "pywrap_tfe": ("TFE_Py_TapeSetIsStopped", "TFE_Py_TapeSetRestartOnThread",
                   "TFE_Py_TapeSetStopOnThread"),
}


def _unsupported(lacks: str) -> ImportError:
    import tensorflow as tf

    return ImportError(f"exla does not support TensorFlow {tf.__version__}: {lacks}, which exla "
                       "uses to route tf.function through itself")


def _private_modules() -> dict[str, Any]:
    try:
        from tensorflow.python import pywrap_tfe
        from tensorflow.python.eager import context
        from tensorflow.python.eager.polymorphic_function import compiler_ir, polymorphic_function
        from tensorflow.python.framework import ops
        from tensorflow.python.ops import control_flow_util, resource_variable_ops
    except ImportError as e:
        raise _unsupported(str(e)) from e
    return {"polymorphic_function": polymorphic_function, "compiler_ir": compiler_ir,
            "context": context, "ops": ops, "control_flow_util": control_flow_util,
            "resource_variable_ops": resource_variable_ops, "pywrap_tfe": pywrap_tfe}


@functools.lru_cache(maxsize=1)
def _private() -> dict[str, Any]:
    """Each private piece by attribute name, found once; one ImportError naming all that are missing."""
    modules = _private_modules()
    pieces = {attribute: getattr(modules[module], attribute, None)
              for module, attributes in _PRIVATE_API.items() for attribute in attributes}
    missing = [f"tensorflow's {module}.{attribute}" for module, attributes in _PRIVATE_API.items()
               for attribute in attributes if pieces[attribute] is None]
    if missing:
        raise _unsupported(f"it lacks {', '.join(missing)}")
    return pieces


def check_private_api() -> None:
    """Raises one ImportError naming the TensorFlow release and each private piece it lacks."""
    _private()


def _piece(attribute: str) -> Any:
    return _private()[attribute]


def function_class() -> type:
    """The class of every ``tf.function`` (``polymorphic_function.Function``)."""
    return _piece("Function")


def in_xla_cluster() -> bool:
    """Whether a graph being built is part of an XLA cluster (never true when executing eagerly)."""
    if _piece("context")().executing_eagerly():
        return False
    return bool(_piece("GraphOrParentsInXlaContext")(_piece("get_default_graph")()))


def eager_device_name() -> str:
    """The device scope of the eager context ('' if none)."""
    return _piece("context")().device_name or ""


@contextlib.contextmanager
def tape_recording_resumed() -> Iterator[None]:
    """Resumes this thread's gradient tapes for the block if they are paused, then pauses them again.

    ``tf.init_scope()`` pauses them; exla's tracing of a user's function must
    not, as TensorFlow's own tracing does not.
    """
    stopped = _piece("TFE_Py_TapeSetIsStopped")()
    if stopped:
        _piece("TFE_Py_TapeSetRestartOnThread")()
    try:
        yield
    finally:
        if stopped:
            _piece("TFE_Py_TapeSetStopOnThread")()


def mark_variable_accessed(variable: Any) -> None:
    """Tells the gradient tapes that ``variable`` was read (a ``py_function`` reads out of their sight)."""
    _piece("variable_accessed")(variable)


def hlo_generator(concrete: Any, flat_specs: Sequence[Any]) -> Any:
    """TensorFlow's HLO generator for a concrete function: call it with ``stage=`` and ``platform_name=``."""
    return _piece("from_concrete_function")(concrete, list(flat_specs))


def untracked_resource_variable(initial_value: Any, **kwargs: Any) -> Any:
    """A resource variable made with the class itself, not ``tf.Variable``.

    A ``tf.function`` being traced again refuses new ``tf.Variable``\\ s
    through its creator scope; exla's run counters are made outside it.
    """
    return _piece("ResourceVariable")(initial_value, **kwargs)
