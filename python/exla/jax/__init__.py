"""exla's JAX frontend: :func:`exla.jit` and everything only JAX needs.

* :mod:`~exla.jax.exla_jit` — ``exla.jit``: ``jax.jit`` whose programs exla
  rewrites, its settings carried in the function's name;
* :mod:`~exla.jax.compile_hook` — which programs JAX compiles exla rewrites,
  with which settings, and what happens when exla fails (the zero-code path
  turns it on for every program);
* :mod:`~exla.jax.explain` — :func:`exla.explain` for JAX functions.

JAX's private compile step itself is :mod:`exla.bridge.jax`'s. Every module
here imports jax at its top, so :mod:`exla` loads this package on first use
of :func:`exla.jit` (``import exla`` loads no framework).
"""

from exla.jax.exla_jit import jit as jit

__all__ = ["jit"]
