"""Tracing a TensorFlow function for :class:`exla.ExlaFunction`: its XLA form and its inputs.

An exla function wraps a ``tf.function(jit_compile=True)``; these functions
make that ``tf.function`` from what the user gave, trace it for a call's
arguments in the eager context (where the program exla rewrites is built),
and line the call's tensors up with the HLO module's parameters.
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import tensorflow as tf

from exla.bridge.tensorflow import function_class
from exla.bridge.tensorflow_call import current_platform
from exla.tensorflow.program import UnsupportedProgram
from exla.tensorflow.tracing import eager_context, exla_tracing, is_tensor, spec_of

__all__ = ["jit_compiled", "lower", "concrete_function", "flat_inputs", "static_inputs"]


def jit_compiled(fn: Any) -> Any:
    """``fn`` as a ``tf.function(jit_compile=True)`` (itself when it already is one).

    Raises:
      TypeError: ``fn`` is not callable.
    """
    if isinstance(fn, function_class()):
        if getattr(fn, "_jit_compile", False):
            return fn
        return tf.function(fn.python_function, input_signature=fn.input_signature,
                           jit_compile=True)
    if callable(fn):
        return tf.function(fn, jit_compile=True)
    raise TypeError(f"exla.function needs a callable, got {type(fn).__name__}")


def concrete_function(tf_fn: Any, args: Sequence[Any], kwargs: dict) -> Any:
    """``tf_fn`` traced in the eager context for the specs of ``args``/``kwargs``."""
    specs = tf.nest.map_structure(spec_of, (args, kwargs))
    with eager_context(), exla_tracing():
        return tf_fn.get_concrete_function(*specs[0], **specs[1])


def lower(tf_fn: Any, args: Sequence[Any], kwargs: dict) -> tuple[Any, tuple, str]:
    """Traces ``tf_fn`` for ``args`` in the eager context.

    ``args``/``kwargs`` hold tensors (eager or symbolic), NumPy arrays,
    ``tf.TensorSpec`` or Python values. Returns ``(concrete function, static
    TensorSpec of its flat inputs, platform)``.
    """
    for leaf in tf.nest.flatten((args, kwargs)):
        if isinstance(leaf, tf.Variable):
            raise UnsupportedProgram("tf.Variable arguments are not supported")
    platform = current_platform()
    concrete = concrete_function(tf_fn, args, kwargs)
    given = [leaf for leaf in tf.nest.flatten((args, kwargs)) if isinstance(leaf, tf.TensorSpec)]
    if given:
        # No tensors to bind: the specs in TensorFlow's own flat order, with
        # the caller's static shapes if TensorFlow generalised them.
        flat_specs = tuple(s for s in tf.nest.flatten(concrete.structured_input_signature)
                           if isinstance(s, tf.TensorSpec))
        if len(flat_specs) == len(given) and not all(s.shape.is_fully_defined() for s in flat_specs):
            flat_specs = tuple(tf.TensorSpec(g.shape, s.dtype) for s, g in zip(flat_specs, given))
    else:
        flat = flat_inputs(tf_fn, concrete, args, kwargs)
        flat_specs = tuple(tf.TensorSpec(t.shape, t.dtype) for t in flat)
    return concrete, flat_specs, platform


def flat_inputs(tf_fn: Any, concrete: Any, args: Sequence[Any], kwargs: dict) -> list[Any]:
    """The tensors of ``args``/``kwargs`` in the order of the HLO parameters."""
    bound = tf_fn.function_type.bind_with_defaults(args, kwargs, tf_fn.function_spec.default_values)
    return concrete.function_type.unpack_inputs(_bind_to_concrete(concrete, bound))


def static_inputs(args: Sequence[Any], kwargs: dict) -> bool:
    """Whether every tensor among ``args``/``kwargs`` has a fully known shape."""
    return all(leaf.shape.is_fully_defined() for leaf in tf.nest.flatten((args, kwargs))
               if is_tensor(leaf))


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

