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
import inspect
import logging
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

from exla import _gradients, _tf_program
from exla.errors import ExlaError, MemoryLimitError
from exla._entry_settings import check_passes, split_settings, takes_settings
from exla.options import explicit_settings
from exla.program_info import ProgramInfo
from exla._tracing import (call_unpatched, eager_context, exla_is_tracing, exla_tracing,
                           is_tensor, mark_internal, not_converted, spec_of)

__all__ = ["function", "ExlaFunction", "ExlaError"]

_log = logging.getLogger("exla")


def _bind_to_concrete(concrete: Any, bound: inspect.BoundArguments) -> inspect.BoundArguments:
    """Arguments bound to the polymorphic function, re-bound to one concrete function.

    The two types name parameters alike except for ``*args``: a concrete
    function has one parameter per element (``args_0``, ``args_1``, ...), so a
    function with ``*args`` cannot unpack the polymorphic binding directly.
    """
    values: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        parameter = bound.signature.parameters[name]
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            values.update((f"{name}_{i}", v) for i, v in enumerate(value))
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            values.update(value)
        else:
            values[name] = value
    positional, keywords = [], {}
    for name, parameter in concrete.function_type.parameters.items():
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD):
            positional.append(values[name])
        else:
            keywords[name] = values[name]
    return concrete.function_type.bind(*positional, **keywords)


def _tf():
    import tensorflow as tf

    return tf


def _reason(exc: BaseException) -> str:
    """A one-line reason for a warning.

    TensorFlow's tracing errors start with "in user code:" and end with the
    actual error, so the last line is taken for those.

    >>> _reason(ValueError("in user code:\\n  File x\\n\\n  TypeError: bad"))
    'ValueError: TypeError: bad'
    """
    lines = [line.strip() for line in str(exc).strip().split("\n") if line.strip()]
    text = (lines[-1] if lines and lines[0].startswith("in user code") else
            (lines[0] if lines else type(exc).__name__))
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}"


def _strict_error(name: str, exc: BaseException) -> ExlaError:
    return ExlaError(f"exla failed on function {name!r}: {type(exc).__name__}: {exc}")


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


class _Failure:
    """A signature exla failed on (cached so that retracing does not retry)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


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
        tf = _tf()
        from tensorflow.python.eager.polymorphic_function import polymorphic_function

        if isinstance(fn, ExlaFunction):
            fn = fn._tf_fn
        if isinstance(fn, polymorphic_function.Function):
            if getattr(fn, "_jit_compile", False):
                tf_fn = fn
            else:
                tf_fn = tf.function(fn.python_function, input_signature=fn.input_signature,
                                    jit_compile=True)
        elif callable(fn):
            tf_fn = tf.function(fn, jit_compile=True)
        else:
            raise TypeError(f"exla.function needs a callable, got {type(fn).__name__}")
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
        self._programs: dict[tuple, Any] = {}
        self._warned: set[str] = set()
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
        with self._lock:
            return [p.info() for p in self._programs.values() if not isinstance(p, _Failure)]

    def options(self) -> Any:
        """The :class:`exla.options.Options` in effect (:func:`exla.options.resolve_options`)."""
        from exla.options import resolve_options

        return resolve_options(**self._settings)

    def explain(self, *args: Any, **kwargs: Any) -> Any:
        """What exla does to this function for these arguments: see :func:`exla.explain`.

        Keywords that name settings override this function's own for the report.
        """
        from exla._explanation import explain_function
        from exla.options import resolve_options

        settings, kwargs = split_settings(kwargs)
        explicit = explicit_settings(settings, where="explain")
        options = resolve_options(**{**self._settings, **explicit})
        return explain_function(self, options, args, kwargs)

    def lower(self, args: Sequence[Any], kwargs: dict) -> tuple[Any, tuple, str]:
        """Traces the function for ``args`` in the eager context.

        ``args``/``kwargs`` hold tensors (eager or symbolic), NumPy arrays,
        ``tf.TensorSpec`` or Python values. Returns ``(concrete function,
        static TensorSpec of its flat inputs, platform)``.
        """
        tf = _tf()
        for leaf in tf.nest.flatten((args, kwargs)):
            if isinstance(leaf, tf.Variable):
                raise _tf_program.UnsupportedProgram("tf.Variable arguments are not supported")
        specs = tf.nest.map_structure(spec_of, (args, kwargs))
        from exla.bridge.tensorflow_call import current_platform

        platform = current_platform()
        with eager_context(), exla_tracing():
            concrete = self._tf_fn.get_concrete_function(*specs[0], **specs[1])
        given = [leaf for leaf in tf.nest.flatten((args, kwargs)) if isinstance(leaf, tf.TensorSpec)]
        if given:
            # No tensors to bind: the specs in TensorFlow's own flat order, with
            # the caller's static shapes if TensorFlow generalised them.
            flat_specs = tuple(s for s in tf.nest.flatten(concrete.structured_input_signature)
                               if isinstance(s, tf.TensorSpec))
            if len(flat_specs) == len(given) and not all(s.shape.is_fully_defined() for s in flat_specs):
                flat_specs = tuple(tf.TensorSpec(g.shape, s.dtype) for s, g in zip(flat_specs, given))
        else:
            flat = self.flat_inputs(concrete, args, kwargs)
            flat_specs = tuple(tf.TensorSpec(t.shape, t.dtype) for t in flat)
        return concrete, flat_specs, platform

    def flat_inputs(self, concrete: Any, args: Sequence[Any], kwargs: dict) -> list[Any]:
        """The tensors of ``args``/``kwargs`` in the order of the HLO parameters."""
        bound = self._tf_fn.function_type.bind_with_defaults(
            args, kwargs, self._tf_fn.function_spec.default_values)
        return concrete.function_type.unpack_inputs(_bind_to_concrete(concrete, bound))

    @not_converted
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tf = _tf()
        if (exla_is_tracing() and not self._internal) or tf.config.functions_run_eagerly():
            # Nested inside a function exla is rewriting as a whole, or the user
            # asked TensorFlow to run functions as plain Python.
            return call_unpatched(self._tf_fn, args, kwargs)
        if tf.executing_eagerly():
            return self.call_eagerly(args, kwargs)
        if self._static_inputs(args, kwargs):
            # Called while another function is traced: the program will run
            # inside that graph, where exla can no longer fall back.
            with _graph_call():
                return self._dispatcher(*args, **kwargs)
        from tensorflow.python.framework import ops
        from tensorflow.python.ops import control_flow_util

        if control_flow_util.GraphOrParentsInXlaContext(ops.get_default_graph()):
            self._warn_once("input shapes are only known at run time inside an XLA cluster",
                            "exla cannot rewrite %r: its input shapes are only known at run time "
                            "inside an XLA cluster; running the original function")
            return call_unpatched(self._tf_fn, args, kwargs)
        from exla._runtime_shapes import call_through_py_function

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

    def _static_inputs(self, args: Sequence[Any], kwargs: dict) -> bool:
        tf = _tf()
        for leaf in tf.nest.flatten((args, kwargs)):
            if is_tensor(leaf) and not leaf.shape.is_fully_defined():
                return False
        return True

    def call_eagerly(self, args: Sequence[Any], kwargs: dict) -> Any:
        """Calls the function in the eager context; on any failure of exla's, the original."""
        try:
            return self._dispatcher(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the original
            self._raise_if_not_recoverable(exc)
            failure = exc
        # If the original fails too, the error is the user's and propagates as it is.
        result = call_unpatched(self._tf_fn, args, kwargs)
        self._forget_signature(args, kwargs, failure)
        self._warn_failure(failure)
        return result

    def _forget_signature(self, args: Sequence[Any], kwargs: dict, failure: BaseException) -> None:
        """After a run-time failure: use the original for this signature from now on."""
        tf = _tf()
        try:
            specs = tf.nest.map_structure(spec_of, (args, kwargs))
            with eager_context(), exla_tracing():
                concrete = self._tf_fn.get_concrete_function(*specs[0], **specs[1])
            with self._lock:
                for key in list(self._programs):
                    if key[0] is concrete:
                        self._programs[key] = _Failure(failure)
        except Exception:  # noqa: BLE001 - then every signature is retraced and retried
            _log.debug("exla: could not find the failed signature of %s", self._name, exc_info=True)
        with self._lock:
            self._dispatcher = self._make_dispatcher()

    # -- the dispatcher: decided while tracing ---------------------------------

    def _make_dispatcher(self) -> Any:
        tf = _tf()

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
            self._raise_if_not_recoverable(exc)
            result = call_unpatched(self._tf_fn, args, kwargs)
            self._warn_failure(exc)
            return result
        return call_unpatched(self._tf_fn, args, kwargs)

    def _plan(self, args: tuple, kwargs: dict) -> tuple | None:
        """The program for this signature (built once); None when exla changes nothing."""
        from exla.options import exla_disabled

        if exla_disabled():
            return None  # exla switched off: the original function
        concrete, flat_specs, platform = self.lower(args, kwargs)
        flat = self.flat_inputs(concrete, args, kwargs)
        key = (concrete, flat_specs, platform)
        with self._lock:
            program = self._programs.get(key)
            if program is None:
                options = self.options()
                try:
                    with eager_context(), exla_tracing():
                        program = _tf_program.build_program(
                            self._name, concrete, flat_specs, platform, options,
                            dump_root=options.dump_dir, convert_unchanged=self._is_vjp,
                            check_compile=_in_graph_call())
                except Exception as exc:  # noqa: BLE001 - remembered, then handled by _trace
                    program = _Failure(exc)
                self._programs[key] = program
        if isinstance(program, _Failure):
            raise program.exc
        if not program.changed and not (self._is_vjp and program.updates):
            return None
        return program, concrete, flat

    def _emit(self, plan: tuple, args: tuple, kwargs: dict) -> Any:
        """Graph of the rewritten program with its gradient."""
        tf = _tf()
        program, concrete, flat = plan
        leaves = tf.nest.flatten((args, kwargs))
        inputs = [leaf for leaf in leaves if is_tensor(leaf)]
        # A VJP recomputes the forward function; the variables it writes must
        # not be written a second time.
        apply_updates = not self._is_vjp
        if program.n_outputs == 0:
            _tf_program.emit(program, flat, apply_updates=apply_updates)
            return concrete.function_type.pack_output([])

        @tf.custom_gradient
        def forward(*unused_inputs: Any) -> Any:
            outputs = _tf_program.emit(program, flat, apply_updates=apply_updates)

            def backward(*output_grads: Any, variables: Sequence[Any] | None = None) -> Any:
                return self._backward(args, kwargs, inputs, outputs, output_grads,
                                      list(variables or []))

            return outputs, backward

        outputs = forward(*inputs)
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        return concrete.function_type.pack_output(list(outputs))

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
        grads_in = _gradients.output_gradients(outputs, output_grads)
        if self._is_vjp:
            grads = _gradients.vjp_graph(self._tf_fn, variables, args, kwargs, grads_in)
        else:
            grads = self.vjp_function(variables)(args, kwargs, grads_in)
        return _gradients.split_gradients(inputs, grads, variables)

    def vjp_function(self, variables: list) -> "ExlaFunction":
        """The exla function computing this function's VJP (one per set of ``variables``)."""
        key = tuple(v.ref() for v in variables)
        with self._lock:
            vjp = self._vjps.get(key)
            if vjp is None:
                vjp = ExlaFunction(mark_internal(_gradients.make_vjp(self._tf_fn, variables)),
                                   name=f"{self._name}_vjp", _internal=True, **self._settings)
                vjp._is_vjp = True
                self._vjps[key] = vjp
            return vjp

    # -- failures --------------------------------------------------------------

    def _raise_if_not_recoverable(self, exc: Exception) -> None:
        """Raises what must reach the user; returns when the original may run instead.

        A memory limit below the program's own inputs and outputs is the
        user's error on every path. Under ``strict`` every failure is raised
        (an :class:`ExlaError` as it is: it may come from a nested call that
        already named the function). Anything else, an internal error of
        exla's included, falls back to the original program.
        """
        if isinstance(exc, MemoryLimitError):
            raise exc
        if self.options().strict:
            if isinstance(exc, ExlaError):
                raise exc
            raise _strict_error(self._name, exc) from exc

    def _warn_failure(self, exc: BaseException) -> None:
        reason = _reason(exc)
        self._warn_once(reason, "exla failed on function %r (" + reason.replace("%", "%%")
                        + "); running the original function")

    def _warn_once(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        _log.warning(message, self._name)


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
