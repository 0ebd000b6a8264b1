"""The demonstration's program: plain TensorFlow that never mentions exla.

Computes the Gaussian-kernel matrix-vector product K(X, X) v for N points in
three dimensions (float64) and saves the result. `python -m exla demo` runs it
with and without exla's XLA_FLAGS.

Usage: python -m exla.demo.tensorflow_program N OUTPUT.npy
"""

import sys
import time

import numpy as np
import tensorflow as tf


@tf.function(jit_compile=True)
def kernel_matvec(x, v):
    d = tf.reduce_sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return tf.matmul(tf.exp(-0.5 * d), v)


def main() -> None:
    n, output = int(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(0)
    x = tf.constant(rng.uniform(size=(n, 3)))
    v = tf.constant(rng.normal(size=(n, 1)))
    start = time.perf_counter()
    result = kernel_matvec(x, v).numpy()
    print(f"computed K(X, X) v for N = {n:,} in {time.perf_counter() - start:.1f} s")
    np.save(output, result)


if __name__ == "__main__":
    main()
