"""Corpus programs made of constants: every rank 0..5 and every element type.

TensorFlow and JAX embed the arrays a function closes over as HLO
``constant`` instructions, printed by XLA; from rank 3 on, XLA's printer
writes index comments into the literal (``{ /*i0=0*/ { /*i1=0*/ {1} } }``).
Registered into `experiments.corpus.programs.REGISTRY` when the package is
imported (experiments/corpus/__init__.py).
"""

from __future__ import annotations

import numpy as np

from .programs import _jax_program, _register, _rng, _tf_program

# The element types of the corpus: HLO name -> numpy dtype name.
DTYPES = {
    "pred": "bool", "s8": "int8", "s32": "int32", "s64": "int64",
    "u8": "uint8", "u32": "uint32", "f16": "float16", "bf16": "bfloat16",
    "f32": "float32", "f64": "float64", "c64": "complex64",
}

# One shape per rank (unit dimensions included), then a large one.
SHAPES = [(), (3,), (2, 3), (2, 1, 3), (1, 2, 1, 2), (2, 1, 2, 1, 2)]
LARGE_SHAPE = (6, 5, 4, 3, 2)  # 720 elements


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _values(dtype_name, shape, seed):
    """Deterministic values of `shape`, with the type's edge values first."""
    dtype = _dtype(dtype_name)
    n = int(np.prod(shape, dtype=np.int64))
    rng = _rng(seed)
    if dtype.kind == "b":
        flat = rng.random(n) > 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, size=n, endpoint=True,
                            dtype=dtype)
        edges = [info.min, info.max, 0, 1]
        flat[:min(n, 4)] = np.array(edges[:min(n, 4)], dtype)
    elif dtype.kind == "c":
        flat = (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
        edges = [complex(np.inf, -0.0), complex(np.nan, 1.5), 1e-30 + 1e30j]
        flat[:min(n, 3)] = np.array(edges[:min(n, 3)], dtype)
    else:
        flat = (rng.normal(size=n) * 100).astype(dtype)
        tiny = np.finfo(np.float32 if dtype_name == "bfloat16" else dtype).tiny
        edges = [np.nan, np.inf, -np.inf, -0.0, tiny / 4, 65504.0, 1e-3,
                 1 / 3]
        flat[:min(n, len(edges))] = np.array(edges[:min(n, len(edges))],
                                             np.float64).astype(dtype)
    return flat.reshape(shape)


def constant_arrays(seed):
    """{(hlo type, shape): array} for every type, every rank and the large shape."""
    arrays = {}
    for i, (hlo_type, dtype_name) in enumerate(DTYPES.items()):
        for j, shape in enumerate(SHAPES + [LARGE_SHAPE]):
            arrays[(hlo_type, shape)] = _values(dtype_name, shape,
                                                seed + 100 * i + j)
    return arrays


@_register
def tf_constants():
    import tensorflow as tf

    arrays = constant_arrays(70)
    x = _rng(71).normal(size=(2, 1, 3)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(x):
        outputs = [tf.constant(a) for a in arrays.values()]
        # Tile of a scalar mask constant, as TensorFlow's causal attention
        # gradient has it, and arithmetic on a rank-3 constant.
        mask = tf.tile(tf.constant(True, shape=[1, 1, 1, 1]), [2, 1, 3, 1])
        ones = tf.tile(tf.constant(1.0, shape=[1, 1, 1, 1]), [1, 2, 1, 2])
        return outputs + [mask, ones, x * tf.constant(arrays[("f32", (2, 1, 3))])]

    return _tf_program("tf_constants", f, [x], rtol=0, atol=0,
                       framework="tensorflow",
                       description="tf.constant of every rank 0..5 and type "
                                   "(pred, s8, s32, s64, u8, u32, f16, bf16, "
                                   "f32, f64, c64), edge values, 720-element "
                                   "constants, Tile of a scalar mask")


@_register
def jax_constants():
    import jax.numpy as jnp

    arrays = constant_arrays(72)
    x = _rng(73).normal(size=(1, 2, 1, 2)).astype(np.float32)

    def f(x):
        outputs = [jnp.asarray(a) for a in arrays.values()]
        return outputs + [x + jnp.asarray(arrays[("f32", (1, 2, 1, 2))])]

    from exla.bridge.jax import enable_x64

    with enable_x64():  # s64, f64 constants stay 64-bit
        return _jax_program("jax_constants", f, (x,), rtol=0, atol=0,
                            description="jnp constants of every rank 0..5 "
                                        "and type, edge values, 720-element "
                                        "constants")
