"""exla never breaks a working program: a failure at any stage runs the original.

A failure is injected (``EXLA_INJECT_FAILURE``, see ``exla._fault_injection``)
at each stage of exla's path: the C++ core's ``optimize``, the conversion to
StableHLO, XLA's compile of the rewritten module and, for TensorFlow called
eagerly, the run. For every frontend (``exla.function``, a Keras ``fit`` with
``jit_compile=True``, ``exla.jit``, and unchanged TensorFlow and JAX scripts
under ``XLA_FLAGS``) the program must give the original's result with one
warning on logger ``exla``, and run the original, not the rewrite (the
rewritten program counts its own runs; JAX lists the programs it compiled
from exla's rewrite). Under ``strict`` the failure is raised instead. Each
test also runs the same program without the injection and checks that the
rewrite then really ran, so that the test cannot pass on a program exla
never rewrote. The JAX half is tests/python/jax/test_fallback.py.
"""

from __future__ import annotations

import logging
import textwrap
import weakref

import numpy as np
import pytest

from tests._frameworks import require

from exla import _fault_injection
from exla.errors import ExlaError

from .._fallback_tools import QUOTED, STAGES, run_script as _run_script
from .._fallback_tools import warnings_of as _warnings

require("tensorflow", module_level=True)
from . import _workloads as workloads  # noqa: E402
from ..test_autoload import site_env  # noqa: E402,F401 - fixture


def _kmv_function(strict: bool = False):
    import exla

    return exla.function(workloads.kernel_matvec, threshold=workloads.THRESHOLD, strict=strict)


def _runs(function) -> int:
    return sum(p.runs for p in function.programs)


# -- exla.function -------------------------------------------------------------

def test_tensorflow_rewrite_runs_without_injection(extension):
    f = _kmv_function(strict=True)
    inputs = workloads.kmv_inputs()
    f(*inputs)
    f(*inputs)
    assert [p.rewritten for p in f.programs] == [True]
    assert _runs(f) == 2  # counted by the rewritten program itself


@pytest.mark.parametrize("stage", STAGES)
def test_tensorflow_function_falls_back(stage, extension, monkeypatch, caplog):
    import tensorflow as tf

    inputs = workloads.kmv_inputs()
    expected = tf.function(workloads.kernel_matvec, jit_compile=True)(*inputs).numpy()
    monkeypatch.setenv(_fault_injection.VARIABLE, stage)
    f = _kmv_function()
    with caplog.at_level(logging.WARNING, logger="exla"):
        first = f(*inputs).numpy()
        second = f(*inputs).numpy()
    # What ran, from the run: a program built before the failure (the
    # compile's comes at the first run) stays listed, with its rewrite's runs.
    built = [(p.rewritten, p.runs) for p in f.programs]
    assert built == ([(False, 0)] if stage == "compile" else []), built
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    (warning,) = _warnings(caplog)
    assert "running the original function" in warning and QUOTED[stage] in warning, warning


def test_tensorflow_run_failure_falls_back(extension, monkeypatch, caplog):
    import tensorflow as tf

    inputs = workloads.kmv_inputs()
    expected = tf.function(workloads.kernel_matvec, jit_compile=True)(*inputs).numpy()
    f = _kmv_function()

    def failing_run(*args, **kwargs):
        raise tf.errors.InternalError(None, None, "run failure injected by the test")

    monkeypatch.setattr(f, "_dispatcher", failing_run)
    with caplog.at_level(logging.WARNING, logger="exla"):
        np.testing.assert_array_equal(f(*inputs).numpy(), expected)
    (warning,) = _warnings(caplog)
    assert "InternalError" in warning and "running the original function" in warning


@pytest.mark.parametrize("stage", STAGES)
def test_tensorflow_function_strict_raises(stage, extension, monkeypatch):
    monkeypatch.setenv(_fault_injection.VARIABLE, stage)
    with pytest.raises(ExlaError, match="exla failed on function|injected"):
        _kmv_function(strict=True)(*workloads.kmv_inputs())


@pytest.mark.parametrize("strict", [False, True])
def test_tensorflow_noop_runs_the_original_silently(strict, extension, monkeypatch, caplog):
    import tensorflow as tf

    inputs = workloads.kmv_inputs()
    monkeypatch.setenv(_fault_injection.VARIABLE, _fault_injection.NOOP)
    f = _kmv_function(strict=strict)
    with caplog.at_level(logging.WARNING, logger="exla"):
        result = f(*inputs).numpy()
    assert [(p.rewritten, p.runs) for p in f.programs] == [(True, 0)]  # reported, not run
    expected = tf.function(workloads.kernel_matvec, jit_compile=True)(*inputs).numpy()
    np.testing.assert_array_equal(result, expected)
    assert not _warnings(caplog)


def test_limit_below_the_programs_own_memory_is_an_error_not_a_fallback(extension):
    import exla

    f = exla.function(workloads.kernel_matvec, memory_limit="1KB")
    with pytest.raises(exla.MemoryLimitError, match="below the program's own arguments"):
        f(*workloads.kmv_inputs())


# -- Keras fit(jit_compile=True) through the zero-code patch ------------------------

def _fit_weights(monkeypatch, *, patched: bool):
    from exla.tensorflow import patch

    model = workloads.keras_model()
    x, y = workloads.keras_data(256)  # 4 batches of 64
    if patched:
        monkeypatch.setenv("EXLA_FLAGS", f"--xla_tensor_size_threshold={workloads.THRESHOLD}")
        patch.install()
    try:
        model.fit(x, y, batch_size=64, epochs=1, verbose=0, shuffle=False)
    finally:
        if patched:
            patch.uninstall()
    return model.get_weights()


@pytest.mark.parametrize("stage", [None, *STAGES])
def test_keras_fit_falls_back(stage, extension, monkeypatch, caplog):
    from exla.tensorflow import patch

    reference = _fit_weights(monkeypatch, patched=False)
    if stage is not None:
        monkeypatch.setenv(_fault_injection.VARIABLE, stage)
    before = weakref.WeakKeyDictionary({w: _runs(w) for w in patch.wrappers()})
    with caplog.at_level(logging.WARNING, logger="exla"):
        weights = _fit_weights(monkeypatch, patched=True)
    ran = sum(_runs(w) - before.get(w, 0) for w in patch.wrappers())
    if stage is None:
        # The train step is called from Keras's outer function: a graph call.
        assert ran == 4, "the rewritten train step did not run once per batch"
        assert not _warnings(caplog)
        for a, b in zip(weights, reference):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        return
    assert ran == 0
    assert any("running the original function" in w for w in _warnings(caplog)), _warnings(caplog)
    for a, b in zip(weights, reference):
        np.testing.assert_array_equal(a, b)


# -- unchanged scripts under XLA_FLAGS ---------------------------------------------

_TF_SCRIPT = textwrap.dedent('''
    # A TensorFlow/Keras script that never mentions exla; the test sets the
    # injected failure before each phase (exla reads it at each use).
    import json, os, sys
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    import weakref
    from exla.tensorflow import patch

    def runs():
        return {w: sum(p.runs for p in w.programs) for w in patch.wrappers()}

    def phase(stage):
        os.environ.pop("EXLA_INJECT_FAILURE", None)
        if stage:
            os.environ["EXLA_INJECT_FAILURE"] = stage
        before = weakref.WeakKeyDictionary(runs())

        @tf.function(jit_compile=True)
        def kernel_matvec(x, y, v):
            d = tf.reduce_sum((x[:, None, :] - y[None, :, :]) ** 2, -1)
            return tf.linalg.matvec(tf.exp(-d), v)

        rng = np.random.default_rng(0)
        x, y, v = rng.random((400, 3)), rng.random((300, 3)), rng.random(300)
        kmv = kernel_matvec(x, y, v).numpy().tolist()
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Dense(512, activation="relu", input_shape=(8,)),
                                  keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=True)
        data = rng.random((128, 9)).astype("float32")
        model.fit(data[:, :8], data[:, 8:], batch_size=64, epochs=1, verbose=0, shuffle=False)
        ran = sum(n - before.get(w, 0) for w, n in runs().items())
        return {"kmv": kmv, "keras": [w.ravel().tolist() for w in model.get_weights()],
                "runs": ran}

    results = {stage or "none": phase(stage) for stage in sys.argv[1:]}
    print(json.dumps(results))
''')

@pytest.mark.slow
def test_unchanged_tensorflow_script_falls_back_at_every_stage(site_env, tmp_path,  # noqa: F811
                                                                extension):
    flags = f"--xla_tensor_size_threshold={workloads.THRESHOLD} --xla_cpu_enable_fast_math=false"
    plain, _ = _run_script(_TF_SCRIPT, [""], dict(site_env, XLA_FLAGS="--xla_cpu_enable_fast_math=false",
                                                  EXLA_DISABLE="1"), tmp_path)
    results, stderr = _run_script(_TF_SCRIPT, ["", *STAGES], dict(site_env, XLA_FLAGS=flags), tmp_path)
    assert plain["none"]["runs"] == 0  # exla did not rewrite: nothing counted
    # Without a failure the rewritten programs ran (counted by themselves):
    # kernel_matvec once, the train step once per batch ...
    assert results["none"]["runs"] == 3, results["none"]["runs"]
    np.testing.assert_allclose(results["none"]["kmv"], plain["none"]["kmv"], rtol=1e-10)
    # ... and with one, the originals ran: the same numbers, bit for bit.
    for stage in STAGES:
        assert results[stage]["runs"] == 0, stage
        assert results[stage]["kmv"] == plain["none"]["kmv"], stage
        assert results[stage]["keras"] == plain["none"]["keras"], stage
        assert QUOTED[stage] in stderr, stage
    assert "running the original function" in stderr
