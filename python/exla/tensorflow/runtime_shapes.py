"""Calls whose input shapes are only known at run time, inside a graph being built.

XLA compiles one program per concrete shape, and so does exla; when an exla
function is called while another ``tf.function`` is traced with partially
unknown shapes (Keras traces its jit-compiled train step inside its outer
train function with a ``None`` batch dimension), the program cannot be built at
trace time. The call becomes a ``tf.py_function`` that runs the exla function
eagerly with the concrete tensors, so each shape gets its own program, as it
would in XLA. Its gradient is a second ``py_function`` running the exla VJP
eagerly.

>>> import tensorflow as tf, exla
>>> square = exla.function(lambda x: x * x)
>>> @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
... def outer(x):
...     return square(x) + 1.0
>>> outer(tf.constant([1.0, 2.0])).numpy().tolist()
[2.0, 5.0]
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import tensorflow as tf

from exla.bridge.tensorflow import mark_variable_accessed
from exla.tensorflow.gradients import output_gradients, split_gradients
from exla.tensorflow.tracing import differentiable, is_tensor

__all__ = ["call_through_py_function"]


def call_through_py_function(exla_function: Any, args: Sequence[Any], kwargs: dict) -> Any:
    """Adds a ``py_function`` calling ``exla_function(*args, **kwargs)`` eagerly to the graph.

    The outputs get the static shapes TensorFlow infers for the original
    function and come back in its nested structure.
    """
    concrete = exla_function.original.get_concrete_function(*args, **kwargs)
    leaves = tf.nest.flatten((args, kwargs))
    positions = [i for i, leaf in enumerate(leaves) if is_tensor(leaf)]
    inputs = [leaves[i] for i in positions]
    outputs = list(concrete.outputs)
    # Passing the variables' handles orders the call with their other uses.
    handles = [v.handle for v in concrete.variables]

    def rebuild(values: Sequence[Any]) -> tuple:
        new_leaves = list(leaves)
        for i, value in zip(positions, values):
            new_leaves[i] = value
        return tf.nest.pack_sequence_as((args, kwargs), new_leaves)

    def run_eagerly(*values: Any) -> list[Any]:
        call_args, call_kwargs = rebuild(values[:len(inputs)])
        result = exla_function.call_eagerly(call_args, call_kwargs)
        flat = [t for t in tf.nest.flatten(result, expand_composites=True) if is_tensor(t)]
        if len(flat) != len(outputs):
            raise ValueError(f"expected {len(outputs)} outputs, got {len(flat)}")
        return flat

    if not outputs:
        tf.py_function(run_eagerly, inputs + handles, Tout=[])
        return concrete.function_type.pack_output([])

    @tf.custom_gradient
    def call(*tensors: Any) -> Any:
        for variable in concrete.variables:
            # The py_function reads them out of the gradient's sight: declare them.
            mark_variable_accessed(variable)
        results = tf.py_function(run_eagerly, list(tensors) + handles,
                                 Tout=[t.dtype for t in outputs])
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        for result, output in zip(results, outputs):
            result.set_shape(output.shape)

        def backward(*output_grads: Any, variables: Sequence[Any] | None = None) -> Any:
            return _backward(exla_function, rebuild, tensors, results, output_grads,
                             list(variables or []))

        return results, backward

    results = call(*inputs)
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    return concrete.function_type.pack_output(results)


def _backward(exla_function: Any, rebuild: Callable[[Sequence[Any]], tuple],
              inputs: Sequence[Any], outputs: Sequence[Any], output_grads: Sequence[Any],
              variables: list) -> Any:
    grads_in = output_gradients(outputs, output_grads)
    sources = [t for t in inputs if differentiable(t.dtype)]
    n_inputs = len(inputs)
    vjp = exla_function.vjp_function(variables)

    def run_vjp(*values: Any) -> list[Any]:
        call_args, call_kwargs = rebuild(values[:n_inputs])
        grads = vjp(call_args, call_kwargs, list(values[n_inputs:]))
        return list(grads) if isinstance(grads, (list, tuple)) else [grads]

    grads = tf.py_function(run_vjp, list(inputs) + grads_in,
                           Tout=[t.dtype for t in sources] + [v.dtype for v in variables])
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    for grad, like in zip(grads, sources + list(variables)):
        grad.set_shape(like.shape)
    return split_gradients(inputs, grads, variables)
