"""exla's JAX frontend: :func:`exla.jit` and everything only JAX needs.

* :mod:`~exla.jax.exla_jit` — ``exla.jit``: ``jax.jit`` whose programs exla
  rewrites, its settings carried in the function's name;
* :mod:`~exla.jax.compile_hook` — which programs JAX compiles exla rewrites,
  with which settings, and what happens when exla fails (the zero-code path
  turns it on for every program);
* :mod:`~exla.jax.explain` — :func:`exla.explain` for JAX functions.

JAX's private compile step itself is :mod:`exla.bridge.jax`'s.
"""

from exla.jax.exla_jit import is_exla_jit as is_exla_jit
from exla.jax.exla_jit import jit as jit

__all__ = ["jit", "is_exla_jit"]
