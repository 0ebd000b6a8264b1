"""exla.jit never breaks a working JAX program: a failure at any stage compiles the original.

The JAX half of tests/python/tensorflow/test_fallback.py (see its docstring): a failure
injected (``EXLA_INJECT_FAILURE``) at each stage of exla's path, for
``exla.jit`` and for an unchanged script under ``XLA_FLAGS``. These run
without TensorFlow installed.
"""

from __future__ import annotations

import logging
import textwrap

import numpy as np
import pytest

from exla import _fault_injection
from exla.errors import ExlaError

from .._fallback_tools import QUOTED, STAGES, run_script
from .._fallback_tools import warnings_of as _warnings
from ..test_autoload import site_env  # noqa: F401 - fixture


# -- exla.jit ------------------------------------------------------------------------

def _jax_kmv(x, v):
    import jax.numpy as jnp

    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v


def _jax_inputs():
    rng = np.random.default_rng(0)
    return rng.random((800, 3)).astype(np.float32), rng.normal(size=800).astype(np.float32)


@pytest.mark.parametrize("stage", [None, *STAGES])
def test_jax_jit_falls_back(stage, extension, monkeypatch, caplog):
    import jax

    import exla
    from exla.jax import compile_hook

    x, v = _jax_inputs()
    expected = np.asarray(jax.jit(_jax_kmv)(x, v))
    if stage is not None:
        monkeypatch.setenv(_fault_injection.VARIABLE, stage)
    # A new function object per test: JAX caches compiled programs per function.
    f = exla.jit(lambda x, v: _jax_kmv(x, v), threshold="1MB")
    before = len(compile_hook.rewritten_programs())
    with caplog.at_level(logging.WARNING, logger="exla"):
        result = np.asarray(f(x, v))
    compiled = compile_hook.rewritten_programs()[before:]
    if stage is None:
        assert len(compiled) == 1, compiled
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
        return
    assert compiled == []
    np.testing.assert_array_equal(result, expected)
    (warning,) = _warnings(caplog)
    assert "running without exla" in warning and QUOTED[stage] in warning, warning


@pytest.mark.parametrize("stage", STAGES)
def test_jax_jit_strict_raises(stage, extension, monkeypatch):
    import exla

    monkeypatch.setenv(_fault_injection.VARIABLE, stage)
    f = exla.jit(lambda x, v: _jax_kmv(x, v), threshold="1MB", strict=True)
    with pytest.raises(ExlaError, match="injected"):
        f(*_jax_inputs())


@pytest.mark.parametrize("strict", [False, True])
def test_jax_noop_runs_the_original_silently(strict, extension, monkeypatch, caplog):
    import jax

    import exla
    from exla.jax import compile_hook

    x, v = _jax_inputs()
    monkeypatch.setenv(_fault_injection.VARIABLE, _fault_injection.NOOP)
    f = exla.jit(lambda x, v: _jax_kmv(x, v), threshold="1MB", strict=strict)
    before = len(compile_hook.rewritten_programs())
    with caplog.at_level(logging.WARNING, logger="exla"):
        result = np.asarray(f(x, v))
    assert compile_hook.rewritten_programs()[before:] == []
    assert exla.explain(f, x, v).rewritten  # what exla reports is unchanged
    np.testing.assert_array_equal(result, np.asarray(jax.jit(_jax_kmv)(x, v)))
    assert not _warnings(caplog)


def test_jax_limit_below_the_programs_own_memory_is_an_error(extension):
    import exla

    f = exla.jit(lambda x, v: _jax_kmv(x, v), memory_limit="1KB")
    with pytest.raises(exla.MemoryLimitError, match="below the program's own arguments"):
        f(*_jax_inputs())


_JAX_SCRIPT = textwrap.dedent('''
    # A JAX script that never mentions exla.
    import json, os, sys
    import numpy as np
    import jax, jax.numpy as jnp

    def phase(stage):
        os.environ.pop("EXLA_INJECT_FAILURE", None)
        if stage:
            os.environ["EXLA_INJECT_FAILURE"] = stage

        @jax.jit
        def kernel_matvec(x, v):
            d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
            return jnp.exp(-0.5 * d) @ v

        rng = np.random.default_rng(0)
        x, v = rng.random((800, 3)).astype(np.float32), rng.normal(size=800).astype(np.float32)
        from exla.jax import compile_hook
        before = len(compile_hook.rewritten_programs())
        out = np.asarray(kernel_matvec(x, v)).tolist()
        return {"kmv": out, "rewritten": compile_hook.rewritten_programs()[before:]}

    results = {stage or "none": phase(stage) for stage in sys.argv[1:]}
    print(json.dumps(results))
''')


@pytest.mark.slow
def test_unchanged_jax_script_falls_back_at_every_stage(site_env, tmp_path, extension):  # noqa: F811
    plain, _ = run_script(_JAX_SCRIPT, [""], dict(site_env), tmp_path)
    results, stderr = run_script(_JAX_SCRIPT, ["", *STAGES],
                                  dict(site_env, XLA_FLAGS="--xla_tensor_size_threshold=1MB"), tmp_path)
    assert len(results["none"]["rewritten"]) == 1, results["none"]
    np.testing.assert_allclose(results["none"]["kmv"], plain["none"]["kmv"], rtol=1e-5, atol=1e-5)
    for stage in STAGES:
        assert results[stage]["rewritten"] == [], stage
        assert results[stage]["kmv"] == plain["none"]["kmv"], stage
        assert QUOTED[stage] in stderr, stage
    assert "running without exla" in stderr
