"""TensorFlow programs shared by the integration tests (exla.function, explain, autoload).

Sizes are chosen so that a 100KB threshold makes exla's passes really rewrite
the programs while every program still compiles and runs in about a second on
two cores.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402

from experiments.workloads import sgpr  # noqa: E402

THRESHOLD = "100KB"


def kernel_matvec(x, y, v):
    """Gaussian kernel matrix-vector product; an n x m x d distance tensor before exla."""
    import tensorflow as tf

    d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
    return tf.linalg.matvec(tf.exp(-d), v)


def kmv_inputs(n: int = 400, m: int = 300, d: int = 3, seed: int = 0):
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    return (tf.constant(rng.random((n, d))), tf.constant(rng.random((m, d))),
            tf.constant(rng.random(m)))


def sgpr_model(n: int = 1000, m: int = 30, seed: int = 1):
    """A GPflow SGPR model on 1-D data: its loss-and-gradients has n x m kernel matrices."""
    import gpflow

    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (n, 1))
    y = np.sin(x) + 0.1 * rng.standard_normal(x.shape)
    z = np.linspace(0, 10, m)[:, None]
    return gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(), inducing_variable=z)


# A Python function returning the SGPR loss and its gradients (GradientTape inside).
sgpr_loss_and_grads = sgpr.loss_and_gradients


def keras_model(seed: int = 0):
    """A tf_keras MLP whose 512-wide hidden layer is 128KB per 64-row batch."""
    import tf_keras as keras

    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.layers.Dense(512, activation="relu", input_shape=(8,)),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=True)
    return model


def keras_data(n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 8)).astype("float32"), rng.random((n, 1)).astype("float32")


def max_abs_difference(a, b) -> float:
    """Largest absolute difference between two nested structures of tensors/arrays."""
    import tensorflow as tf

    tf.nest.assert_same_structure(a, b)
    worst = 0.0
    for p, q in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        if p is None or q is None:
            assert p is None and q is None
            continue
        worst = max(worst, float(np.max(np.abs(np.asarray(p, np.float64) - np.asarray(q, np.float64)),
                                        initial=0.0)))
    return worst
