"""``python -m exla demo``: the out-of-memory demonstration.

* :mod:`~exla.demo.runner` — runs the program twice under a hard memory cap,
  without and with exla's flags, and checks exla's result;
* :mod:`~exla.demo.tensorflow_program` and :mod:`~exla.demo.jax_program` —
  the program, plain TensorFlow and plain JAX: scripts that never mention exla,
  run in a child process.
"""

from exla.demo.runner import main as main

__all__ = ["main"]
