"""The JAX twin of the demonstration's program: plain JAX that never mentions exla.

Computes the Gaussian-kernel matrix-vector product K(X, X) v for N points in
three dimensions (float64) and saves the result. `python -m exla demo --jax`
runs it with and without exla's XLA_FLAGS.

Usage: python -m exla.demo.jax_program N OUTPUT.npy
"""

import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


@jax.jit
def kernel_matvec(x, v):
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v


def main() -> None:
    n, output = int(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(size=(n, 3)))
    v = jnp.asarray(rng.normal(size=(n, 1)))
    start = time.perf_counter()
    result = np.asarray(kernel_matvec(x, v))
    print(f"computed K(X, X) v for N = {n:,} in {time.perf_counter() - start:.1f} s")
    np.save(output, result)


if __name__ == "__main__":
    main()
