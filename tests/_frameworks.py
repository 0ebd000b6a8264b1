"""Which frameworks a test environment has, and what a test does without one.

CI runs the suite in three environments (.ci/run): the main one (everything
installed), ``EXLA_TEST_ENV=jax`` (the newest jax without TensorFlow: the JAX
path must not need it) and ``EXLA_TEST_ENV=tensorflow-oldest`` (the oldest
TensorFlow with numpy 2, where GPflow, which needs numpy < 2, cannot be
installed). A test that needs a package its environment leaves out by design
is skipped with a reason that names the environment; anywhere else a missing
package is an error, so that nothing is skipped silently.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

__all__ = ["has", "require", "environment"]

# What each named environment leaves out on purpose (Makefile, .ci/*.txt).
LEFT_OUT = {
    "jax": {"tensorflow", "tf_keras", "gpflow", "tensorflow_probability"},
    "tensorflow-oldest": {"gpflow", "tensorflow_probability"},
}


def environment() -> str:
    """The test environment's name (``EXLA_TEST_ENV``; "" for the main one)."""
    return os.environ.get("EXLA_TEST_ENV", "")


def has(module: str) -> bool:
    """Whether ``module`` can be imported here (without importing it)."""
    return importlib.util.find_spec(module) is not None


def require(module: str = "tensorflow", *, module_level: bool = False) -> None:
    """Skips the calling test (or module) where the environment leaves ``module``
    out by design; elsewhere a missing ``module`` fails it."""
    if has(module):
        return
    env = environment()
    if module in LEFT_OUT.get(env, ()):
        pytest.skip(f"{module} is not installed in this environment (EXLA_TEST_ENV={env})",
                    allow_module_level=module_level)
    pytest.fail(f"{module} is not installed, and EXLA_TEST_ENV={env or '(unset)'} does not "
                f"leave it out", pytrace=False)
