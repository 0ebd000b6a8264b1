"""Gradients of exla programs: the VJP of the original function.

``XlaCallModule`` has no gradient of its own, so exla registers one (with
``tf.custom_gradient``) whose backward program is the vector-Jacobian product
of the *original* function, itself a ``tf.function(jit_compile=True)`` that
exla rewrites like any other (:func:`make_vjp`): the backward pass is
memory-safe too. The VJP recomputes the forward function inside the backward
program, which is what lets the rewritten forward program keep no
intermediates.

Conventions: the differentiable sources are the floating-point tensors of the
call's ``(args, kwargs)`` in ``tf.nest.flatten`` order, then the variables;
one output gradient is given per floating-point flat output.

>>> import tensorflow as tf
>>> w = tf.Variable(3.0)
>>> vjp = make_vjp(tf.function(lambda x, n: x * w * n, jit_compile=True), [w])
>>> [float(g) for g in vjp((tf.constant(2.0), 4), {}, [tf.constant(1.0)])]
[12.0, 8.0]
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import tensorflow as tf

from exla.tensorflow.program import emit
from exla.tensorflow.tracing import call_unpatched, differentiable, is_tensor

__all__ = ["emit_differentiable", "vjp_graph", "make_vjp", "output_gradients", "split_gradients"]

# backward(inputs, outputs, output_grads, variables) -> gradients of inputs and variables
Backward = Callable[[list, list, Sequence[Any], list], Any]


def emit_differentiable(program: Any, concrete: Any, flat: Sequence[Any], call: tuple,
                        *, apply_updates: bool, backward: Backward) -> Any:
    """The rewritten ``program`` in the graph being traced, with ``backward`` as its gradient.

    ``call`` is the call's ``(args, kwargs)``; the tensors among them are the
    differentiable inputs. Returns the outputs packed as ``concrete`` returns them.
    """
    inputs = [leaf for leaf in tf.nest.flatten(call) if is_tensor(leaf)]
    if program.n_outputs == 0:
        emit(program, flat, apply_updates=apply_updates)
        return concrete.function_type.pack_output([])

    @tf.custom_gradient
    def forward(*unused_inputs: Any) -> Any:
        outputs = emit(program, flat, apply_updates=apply_updates)

        def gradient(*output_grads: Any, variables: Sequence[Any] | None = None) -> Any:
            return backward(inputs, outputs, output_grads, list(variables or []))

        return outputs, gradient

    outputs = forward(*inputs)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    return concrete.function_type.pack_output(list(outputs))


def vjp_graph(tf_fn: Any, variables: Sequence[Any], args: tuple, kwargs: dict,
              output_grads: list) -> list:
    """Adds the VJP of ``tf_fn`` at ``(args, kwargs)`` to the graph being built.

    Returns the gradients of the floating-point tensor arguments followed by
    those of ``variables`` (zeros where unconnected).
    """
    sources = [t for t in tf.nest.flatten((args, kwargs)) if is_tensor(t) and differentiable(t.dtype)]
    result = call_unpatched(tf_fn, args, kwargs)
    targets = [t for t in tf.nest.flatten(result, expand_composites=True)
               if is_tensor(t) and differentiable(t.dtype)]
    if len(targets) != len(output_grads):
        raise ValueError(f"VJP: {len(targets)} differentiable outputs but "
                         f"{len(output_grads)} output gradients")
    # Symbolic gradients, not a GradientTape: this runs while TensorFlow builds
    # a backward function, where tapes are paused.
    grads = tf.gradients(targets, sources + list(variables), grad_ys=output_grads,
                         unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return [tf.convert_to_tensor(g) for g in grads]


def make_vjp(tf_fn: Any, variables: Sequence[Any]) -> Any:
    """``tf.function(jit_compile=True)`` computing the VJP of ``tf_fn`` (see :func:`vjp_graph`).

    Called as ``vjp(args, kwargs, output_grads)`` with the original call's
    arguments.
    """
    variables = list(variables)

    def vjp(args: tuple, kwargs: dict, output_grads: list) -> list:
        return vjp_graph(tf_fn, variables, args, kwargs, output_grads)

    vjp.__name__ = f"{getattr(tf_fn, '__name__', 'function')}_vjp"
    return tf.function(vjp, jit_compile=True, autograph=False)


def output_gradients(outputs: Sequence[Any], output_grads: Sequence[Any]) -> list:
    """The gradients of the floating-point outputs, zeros for those TensorFlow left as None."""
    return [grad if grad is not None else tf.zeros_like(output)
            for output, grad in zip(outputs, output_grads) if differentiable(output.dtype)]


def split_gradients(inputs: Sequence[Any], grads: Sequence[Any], variables: Sequence[Any]) -> Any:
    """What a ``tf.custom_gradient`` backward function returns for ``inputs`` and ``variables``.

    ``grads`` holds the gradients of the floating-point ``inputs`` then of the
    ``variables``; the other inputs get None.
    """
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    it = iter(grads)
    input_grads = [next(it) if differentiable(t.dtype) else None for t in inputs]
    if variables:
        return input_grads, list(it)
    return input_grads
