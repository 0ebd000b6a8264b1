"""``exla.function``: run a TensorFlow function through exla's passes.

``exla.function`` wraps a Python function or a ``tf.function`` and compiles it
with XLA, like ``tf.function(jit_compile=True)``. For every input signature
(each concrete shape is its own entry, as in XLA) exla lowers the function to
HLO, runs its pipeline and, only when a pass really rewrote the module, runs
the rewritten program through TensorFlow's ``XlaCallModule`` op; otherwise the
original function runs, untouched.

>>> import numpy as np, tensorflow as tf, exla
>>> @exla.function(threshold="100KB")
... def kernel_sum(x, y, v):
...     d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
...     return {"k": tf.linalg.matvec(tf.exp(-d), v)}
>>> x = tf.constant(np.random.rand(300, 3)); v = tf.ones([300], tf.float64)
>>> out = kernel_sum(x, x, v)
>>> out["k"].shape
TensorShape([300])

How it works: the object wraps the user's ``tf.function`` in a *dispatcher*,
itself a ``tf.function(jit_compile=True)``. Tracing the dispatcher for a new
signature traces the user's function in the eager context, gets its HLO and
runs exla's pipeline; the dispatcher's graph then holds either the
``XlaCallModule`` call (with the variable reads and writes around it, and a
gradient whose backward program is the VJP of the original function, itself
compiled through exla) or a plain call of the original. Calls after the first
cost what a call of any ``tf.function`` costs.

Inside another function being traced (e.g. Keras calling its jit-compiled
train step from its outer ``tf.function``), inputs with static shapes take the
same path; inputs whose shapes are only known at run time go through
``tf.py_function``, which calls the function eagerly with the concrete shapes.

Failures: anything that goes wrong inside exla logs one warning naming the
function and the reason, and the original function runs. ``strict=True`` or
``EXLA_STRICT=1`` raises :class:`ExlaError` instead. ``EXLA_DUMP_TO=DIR`` writes
the module before and after every pass under ``DIR``. ``EXLA_DISABLE=1`` runs
every new signature with the original function.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

import tensorflow as tf

from exla import _fault_injection
from exla._entry_settings import check_passes, split_settings, takes_settings
from exla.bridge.tensorflow import in_xla_cluster
from exla.errors import ExlaError
from exla.options import exla_disabled, explicit_settings, resolve_options
from exla.tensorflow import gradients, lowering
from exla.tensorflow.explain import explain_function
from exla.tensorflow.fallback import FallbackPolicy
from exla.tensorflow.program import build_program
from exla.tensorflow.program_cache import ProgramCache
from exla.tensorflow.program_info import ProgramInfo
from exla.tensorflow.runtime_shapes import call_through_py_function
from exla.tensorflow.tracing import (call_unpatched, eager_context, exla_is_tracing, exla_tracing,
                                     mark_internal, not_converted)

__all__ = ["function", "ExlaFunction", "ExlaError"]


_call_state = threading.local()


@contextlib.contextmanager
def _graph_call() -> Iterator[None]:
    """Marks the dispatcher calls made in this block as calls from a graph."""
    outer = getattr(_call_state, "graph", False)
    _call_state.graph = True
    try:
        yield
    finally:
        _call_state.graph = outer


def _in_graph_call() -> bool:
    return getattr(_call_state, "graph", False)


class ExlaFunction:
    """A function compiled with XLA after exla's passes. Create it with :func:`function`.

    Calling it runs the (possibly rewritten) program and returns the outputs in
    the original nested structure; variables the function writes are assigned.

    >>> import tensorflow as tf, exla
    >>> f = exla.function(lambda x: {"y": x + 1}, threshold="1MB")
    >>> isinstance(f, exla.ExlaFunction), f(tf.constant(1.0))["y"].numpy(), f.options().threshold
    (True, 2.0, 1000000)
    """

    @takes_settings()
    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, _internal: bool = False,
                 **settings: Any) -> None:
        tf_fn = lowering.jit_compiled(fn._tf_fn if isinstance(fn, ExlaFunction) else fn)
        self._tf_fn = tf_fn
        self._python_function = getattr(tf_fn, "python_function", fn)
        self._name = name or getattr(self._python_function, "__name__", None) or "function"
        # The settings given to this function (checked now: a bad size or pass
        # name fails here, not at the first call); the rest come from the flags.
        self._settings = explicit_settings(settings, where="exla.function")
        check_passes(self._settings)
        self._internal = _internal
        self._is_vjp = False
        self._lock = threading.RLock()
        self._programs = ProgramCache()
        self._policy = FallbackPolicy(self._name, lambda: self.options().strict)
        self._vjps: dict[tuple, ExlaFunction] = {}
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._dispatcher = self._make_dispatcher()
        functools.update_wrapper(self, self._python_function, updated=())

    # -- public surface ------------------------------------------------------

    @property
    def python_function(self) -> Callable[..., Any]:
        """The wrapped Python function."""
        return self._python_function

    @property
    def original(self) -> Any:
        """The ``tf.function(jit_compile=True)`` that exla rewrites."""
        return self._tf_fn

    @property
    def programs(self) -> list[ProgramInfo]:
        """exla's results so far, one :class:`exla.ProgramInfo` per signature.

        >>> import tensorflow as tf, exla
        >>> f = exla.function(lambda x: x + 1)
        >>> _ = f(tf.constant(1.0))
        >>> [p.rewritten for p in f.programs]
        [False]
        """
        return self._programs.infos()

    def options(self) -> Any:
        """The :class:`exla.options.Options` in effect (:func:`exla.options.resolve_options`)."""
        return resolve_options(**self._settings)

    def explain(self, *args: Any, **kwargs: Any) -> Any:
        """What exla does to this function for these arguments: see :func:`exla.explain`.

        Keywords that name settings override this function's own for the report.
        """
        settings, kwargs = split_settings(kwargs)
        explicit = explicit_settings(settings, where="explain")
        options = resolve_options(**{**self._settings, **explicit})
        return explain_function(self, options, args, kwargs)

    def lower(self, args: Sequence[Any], kwargs: dict) -> tuple[Any, tuple, str]:
        """``(concrete function, flat input specs, platform)`` for ``args``: see
        :func:`exla.tensorflow.lowering.lower`."""
        return lowering.lower(self._tf_fn, args, kwargs)

    def flat_inputs(self, concrete: Any, args: Sequence[Any], kwargs: dict) -> list[Any]:
        """The tensors of ``args``/``kwargs`` in the order of the HLO parameters."""
        return lowering.flat_inputs(self._tf_fn, concrete, args, kwargs)

    @not_converted
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if (exla_is_tracing() and not self._internal) or tf.config.functions_run_eagerly():
            # Nested inside a function exla is rewriting as a whole, or the user
            # asked TensorFlow to run functions as plain Python.
            return call_unpatched(self._tf_fn, args, kwargs)
        if tf.executing_eagerly():
            return self.call_eagerly(args, kwargs)
        if lowering.static_inputs(args, kwargs):
            # Called while another function is traced: the program will run
            # inside that graph, where exla can no longer fall back.
            with _graph_call():
                return self._dispatcher(*args, **kwargs)
        if in_xla_cluster():
            self._policy.warn_once("input shapes are only known at run time inside an XLA cluster",
                                   "exla cannot rewrite %r: its input shapes are only known at run "
                                   "time inside an XLA cluster; running the original function")
            return call_unpatched(self._tf_fn, args, kwargs)
        return call_through_py_function(self, args, kwargs)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        try:
            return self._bound[instance]
        except (KeyError, TypeError):
            pass
        bound = ExlaFunction(self._tf_fn.__get__(instance, owner), name=self._name,
                             _internal=self._internal, **self._settings)
        try:
            self._bound[instance] = bound
        except TypeError:  # not weak-referenceable: no cache
            pass
        return bound

    def __repr__(self) -> str:
        return f"<exla.function {self._name}>"

    # -- call paths ----------------------------------------------------------

    def call_eagerly(self, args: Sequence[Any], kwargs: dict) -> Any:
        """Calls the function in the eager context; on any failure of exla's, the original."""
        try:
            return self._dispatcher(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the original
            self._policy.raise_if_not_recoverable(exc)
            failure = exc
        # If the original fails too, the error is the user's and propagates as it is.
        result = call_unpatched(self._tf_fn, args, kwargs)
        self._forget_signature(args, kwargs, failure)
        self._policy.warn_failure(failure)
        return result

    def _forget_signature(self, args: Sequence[Any], kwargs: dict, failure: BaseException) -> None:
        """After a run-time failure: use the original for this signature from now on."""
        try:
            self._programs.forget(lowering.concrete_function(self._tf_fn, args, kwargs), failure)
        except Exception:  # noqa: BLE001 - then every signature is retraced and retried
            logging.getLogger("exla").debug("exla: could not find the failed signature of %s",
                                            self._name, exc_info=True)
        with self._lock:
            self._dispatcher = self._make_dispatcher()

    # -- the dispatcher: decided while tracing ---------------------------------

    def _make_dispatcher(self) -> Any:

        def dispatch(*args: Any, **kwargs: Any) -> Any:
            return self._trace(args, kwargs)

        dispatch.__name__ = f"exla_{self._name}"
        return mark_internal(tf.function(dispatch, jit_compile=True, autograph=False))

    def _trace(self, args: tuple, kwargs: dict) -> Any:
        """Body of the dispatcher: the rewritten program, or the original."""
        try:
            plan = self._plan(args, kwargs)
            if plan is not None:
                return self._emit(plan, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the original
            self._policy.raise_if_not_recoverable(exc)
            result = call_unpatched(self._tf_fn, args, kwargs)
            self._policy.warn_failure(exc)
            return result
        return call_unpatched(self._tf_fn, args, kwargs)

    def _plan(self, args: tuple, kwargs: dict) -> tuple | None:
        """The program for this signature (built once); None when exla changes nothing."""
        if exla_disabled():
            return None  # exla switched off: the original function
        concrete, flat_specs, platform = self.lower(args, kwargs)
        flat = self.flat_inputs(concrete, args, kwargs)

        def build() -> Any:
            options = self.options()
            with eager_context(), exla_tracing():
                return build_program(
                    self._name, concrete, flat_specs, platform, options,
                    dump_root=options.dump_dir, convert_unchanged=self._is_vjp,
                    check_compile=_in_graph_call())

        program = self._programs.get((concrete, flat_specs, platform), build)
        if not program.changed and not (self._is_vjp and program.updates):
            return None
        if _fault_injection.noop():
            return None  # tests only: the original runs, as after a silent fallback
        return program, concrete, flat

    def _emit(self, plan: tuple, args: tuple, kwargs: dict) -> Any:
        """Graph of the rewritten program with its gradient."""
        program, concrete, flat = plan
        # A VJP recomputes the forward function; the variables it writes must
        # not be written a second time.
        return gradients.emit_differentiable(
            program, concrete, flat, (args, kwargs), apply_updates=not self._is_vjp,
            backward=functools.partial(self._backward, args, kwargs))

    # -- gradients -------------------------------------------------------------

    def _backward(self, args: tuple, kwargs: dict, inputs: list, outputs: list,
                  output_grads: Sequence[Any], variables: list) -> Any:
        """Gradients of the inputs and ``variables``: the VJP of the original function.

        For a user's function the VJP is itself an exla function (its program
        is rewritten, so the backward pass is memory-safe too). For a VJP
        program (second-order gradients) it is TensorFlow's own symbolic
        gradient: building exla VJPs of VJPs would never end, since TensorFlow
        prepares higher-order gradients eagerly under a persistent tape.
        """
        grads_in = gradients.output_gradients(outputs, output_grads)
        if self._is_vjp:
            grads = gradients.vjp_graph(self._tf_fn, variables, args, kwargs, grads_in)
        else:
            grads = self.vjp_function(variables)(args, kwargs, grads_in)
        return gradients.split_gradients(inputs, grads, variables)

    def vjp_function(self, variables: list) -> "ExlaFunction":
        """The exla function computing this function's VJP (one per set of ``variables``)."""
        key = tuple(v.ref() for v in variables)
        with self._lock:
            vjp = self._vjps.get(key)
            if vjp is None:
                vjp = ExlaFunction(mark_internal(gradients.make_vjp(self._tf_fn, variables)),
                                   name=f"{self._name}_vjp", _internal=True, **self._settings)
                vjp._is_vjp = True
                self._vjps[key] = vjp
            return vjp


@takes_settings()
def function(fn: Callable[..., Any] | None = None, **settings: Any) -> Any:
    """Compiles ``fn`` with XLA after exla's memory-safety passes.

    Use as ``@exla.function`` or ``@exla.function(threshold="1GB")``, on a
    Python function or an existing ``tf.function`` (which is compiled with
    ``jit_compile=True`` in any case).

    Args:
      fn: the function.
      {SETTINGS}

    A setting left None comes from its environment variable, then
    ``EXLA_FLAGS``, then ``XLA_FLAGS`` (see :func:`exla.options.resolve_options`),
    read when a signature is first compiled; ``passes`` defaults to the default
    pipeline less the passes ``--xla_disable_hlo_passes`` names. With
    ``memory_limit`` exla chooses the threshold and split size itself (see
    :func:`exla.optimize_hlo`); an explicit threshold still bounds every tensor.

    Returns:
      An :class:`ExlaFunction` (or a decorator making one, when ``fn`` is None).

    Raises:
      TypeError: a keyword that is not a setting.
      ValueError: a bad size, an unknown pass name, or a boolean keyword that
        is not True or False.

    >>> import tensorflow as tf, exla
    >>> square = exla.function(lambda x: x * x)
    >>> float(square(tf.constant(3.0)))
    9.0
    """
    # Checked now, also for the decorator form: a typo fails where it is written.
    check_passes(explicit_settings(settings, where="exla.function"))

    def wrap(f: Callable[..., Any]) -> ExlaFunction:
        return ExlaFunction(f, **settings)

    return wrap if fn is None else wrap(fn)
