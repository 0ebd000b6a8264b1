"""exla.function: results, variables, gradients and failures, compared with plain TensorFlow.

Every workload runs twice, through exla and through ``tf.function(jit_compile=True)``,
at sizes where a 100KB threshold makes exla really rewrite the program (the
tests check, from the run count each rewritten program keeps, that the
rewrite is what ran), and the results must agree.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from tests._frameworks import require

require("tensorflow", module_level=True)
import tensorflow as tf

from . import _workloads as workloads  # noqa: E402

THRESHOLD = workloads.THRESHOLD


@pytest.fixture(autouse=True)
def _needs_extension(extension, monkeypatch):
    # Tests set their own options; the developer's environment must not leak in.
    for name in ("EXLA_FLAGS", "EXLA_STRICT", "EXLA_DUMP_TO", "EXLA_DISABLE", "XLA_FLAGS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def exla():
    import exla

    return exla


@pytest.fixture
def patched(monkeypatch):
    """exla's autoload patch, in process: every jit tf.function goes through exla."""
    from exla.tensorflow import patch

    monkeypatch.setenv("EXLA_FLAGS", f"--xla_tensor_size_threshold={THRESHOLD}")
    patch.install()
    yield
    patch.uninstall()


def _ran_rewritten(exla_function) -> list[list[str]]:
    """The passes that changed each rewritten program that ran (counted by the program itself)."""
    return [p.report.changed_passes for p in exla_function.programs if p.changed and p.runs >= 1]


def test_nested_structured_outputs(exla):
    def structured(x, y, v, scale=2.0):
        k = workloads.kernel_matvec(x, y, v)
        return {"k": k * scale, "parts": [tf.reduce_sum(k), None, (tf.shape(x), 3)]}

    f = exla.function(structured, threshold=THRESHOLD, strict=True)
    args = workloads.kmv_inputs()
    got, want = f(*args), tf.function(structured, jit_compile=True)(*args)
    assert _ran_rewritten(f), "exla's rewritten program did not run"
    assert list(got) == ["k", "parts"] and got["parts"][1] is None and got["parts"][2][1] == 3
    assert workloads.max_abs_difference(got, want) < 1e-9
    got = f(*args, scale=3.0)  # a Python argument: another signature
    assert workloads.max_abs_difference(got["k"], want["k"] * 1.5) < 1e-9


def test_variadic_and_keyword_only_arguments(exla):
    # A concrete function names `*weights` elementwise (weights_0, weights_1, ...);
    # exla must feed the HLO parameters in that order, keyword-only ones last.
    def variadic(x, *weights, y, scale=2.0):
        k = workloads.kernel_matvec(x, y, weights[0])
        return scale * k + tf.reduce_sum(weights[1]) - tf.reduce_sum(weights[2])

    f = exla.function(variadic, threshold=THRESHOLD, strict=True)
    x, y, v = workloads.kmv_inputs()
    extra = [tf.constant(np.arange(4.0, dtype=np.float64)), tf.constant([1.5], tf.float64)]
    got = f(x, v, *extra, y=y, scale=3.0)
    want = tf.function(variadic, jit_compile=True)(x, v, *extra, y=y, scale=3.0)
    assert _ran_rewritten(f), "exla's rewritten program did not run"
    assert workloads.max_abs_difference(got, want) < 1e-9


def test_unchanged_program_runs_the_original(exla):
    f = exla.function(workloads.kernel_matvec)  # no threshold: nothing to split
    args = workloads.kmv_inputs(n=20, m=10)
    np.testing.assert_allclose(f(*args), workloads.kernel_matvec(*args), rtol=1e-12)
    assert f.programs and not any(p.changed for p in f.programs)
    assert not any(p.rewritten for p in f.programs)


def test_exla_disable_runs_the_original(exla, monkeypatch):
    monkeypatch.setenv("EXLA_DISABLE", "1")
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    args = workloads.kmv_inputs()
    np.testing.assert_allclose(f(*args), workloads.kernel_matvec(*args), rtol=1e-12)
    assert not f.programs


def test_each_shape_is_its_own_entry(exla):
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    for n in (400, 500, 400):
        args = workloads.kmv_inputs(n=n)
        np.testing.assert_allclose(f(*args), workloads.kernel_matvec(*args), rtol=1e-10)
    assert sorted(p.runs for p in f.programs if p.changed) == [1, 2]  # 400 twice, 500 once


def test_variables_are_read_and_written_back(exla):
    def make():
        w = tf.Variable(tf.constant(0.5, tf.float64))
        count = tf.Variable(0, dtype=tf.int64)
        total = tf.Variable(tf.zeros([400], tf.float64))

        def step(x, y, v):
            count.assign_add(1)
            out = workloads.kernel_matvec(x, y, v) * w
            total.assign_add(out)
            return out

        return step, (w, count, total)

    step_a, state_a = make()
    step_b, state_b = make()
    f, g = exla.function(step_a, threshold=THRESHOLD, strict=True), tf.function(step_b, jit_compile=True)
    args = workloads.kmv_inputs()
    for _ in range(3):
        np.testing.assert_allclose(f(*args), g(*args), rtol=1e-10)
    assert _ran_rewritten(f)
    assert len(f.programs[0].variables_written) == 2
    assert int(state_a[1].numpy()) == 3
    for a, b in zip(state_a, state_b):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


def test_gradient_through_an_exla_function(exla):
    w = tf.Variable(tf.constant(1.5, tf.float64))

    def fn(x, y, v):
        return {"k": workloads.kernel_matvec(x, y, v) * w, "n": tf.shape(x)[0]}

    f = exla.function(fn, threshold=THRESHOLD, strict=True)
    g = tf.function(fn, jit_compile=True)
    x, y, v = workloads.kmv_inputs()
    grads = []
    for h in (f, g):
        with tf.GradientTape() as tape:
            tape.watch([x, v])
            loss = tf.reduce_sum(h(x, y, v)["k"] ** 2)
        grads.append(tape.gradient(loss, [x, v, w]))
    assert _ran_rewritten(f)
    backward = next(iter(f._vjps.values()))
    assert _ran_rewritten(backward), "the rewritten backward program did not run"
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-10)


def _plain_gradient(fn, x, y, v):
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = tf.function(fn, jit_compile=True)(x, y, v)
    return tape.gradient(out, x)


def test_backward_pass_does_not_repeat_variable_writes(exla):
    count = tf.Variable(0.0, dtype=tf.float64)

    def fn(x, y, v):
        count.assign_add(1.0)
        return workloads.kernel_matvec(x, y, v)

    f = exla.function(fn, threshold=THRESHOLD, strict=True)
    x, y, v = workloads.kmv_inputs()
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = f(x, y, v)
    grad = tape.gradient(out, x)
    assert _ran_rewritten(f) and _ran_rewritten(next(iter(f._vjps.values())))
    np.testing.assert_allclose(grad, _plain_gradient(workloads.kernel_matvec, x, y, v), rtol=1e-8)
    assert float(count.numpy()) == 1.0


def test_inside_outer_tf_function_static_and_dynamic_shapes(exla):
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    args = workloads.kmv_inputs()
    want = workloads.kernel_matvec(*args)

    @tf.function
    def static(x, y, v):
        return f(x, y, v) + 1.0

    spec = [tf.TensorSpec([None, 3], tf.float64)] * 2 + [tf.TensorSpec([None], tf.float64)]

    @tf.function(input_signature=spec)
    def dynamic(x, y, v):  # shapes known only at run time: a py_function path
        return f(x, y, v) + 1.0

    np.testing.assert_allclose(static(*args), want + 1.0, rtol=1e-10)
    assert [p.runs for p in f.programs] == [1], "the graph call did not run the rewrite"
    np.testing.assert_allclose(dynamic(*args), want + 1.0, rtol=1e-10)
    assert [p.runs for p in f.programs] == [2], "the py_function path did not run the rewrite"
    x, y, v = args
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = tf.reduce_sum(dynamic(x, y, v))
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        ref = tf.reduce_sum(workloads.kernel_matvec(x, y, v))
    np.testing.assert_allclose(tape.gradient(out, x), tape2.gradient(ref, x), rtol=1e-8)
    assert len(f.programs) == 1 and f.programs[0].changed and f.programs[0].runs == 3
    assert _ran_rewritten(next(iter(f._vjps.values()))), "the backward program did not run"


def test_hand_written_adam_training_loop(exla):
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(256, 16)).astype(np.float32))
    y = tf.constant(rng.normal(size=(256, 1)).astype(np.float32))

    def make_step():
        init = np.random.default_rng(4)
        params = [tf.Variable(init.normal(size=s).astype(np.float32) * 0.1)
                  for s in ((16, 1024), (1024,), (1024, 1), (1,))]
        slots = [(tf.Variable(tf.zeros_like(p)), tf.Variable(tf.zeros_like(p))) for p in params]
        t = tf.Variable(0.0)

        def step(x, y):
            with tf.GradientTape() as tape:
                hidden = tf.nn.relu(x @ params[0] + params[1])  # 256 x 1024 f32: 1 MB
                loss = tf.reduce_mean((hidden @ params[2] + params[3] - y) ** 2)
            grads = tape.gradient(loss, params)
            t.assign_add(1.0)
            lr = 1e-3 * tf.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            for p, g, (m, v) in zip(params, grads, slots):
                m.assign(0.9 * m + 0.1 * g)
                v.assign(0.999 * v + 0.001 * g * g)
                p.assign_sub(lr * m / (tf.sqrt(v) + 1e-7))
            return loss

        return step, params

    step_a, params_a = make_step()
    step_b, params_b = make_step()
    f, g = exla.function(step_a, threshold=THRESHOLD, strict=True), tf.function(step_b, jit_compile=True)
    losses = [(float(f(x, y)), float(g(x, y))) for _ in range(5)]
    assert _ran_rewritten(f), "exla's rewritten training step did not run"
    np.testing.assert_allclose(*zip(*losses), rtol=1e-5)
    assert losses[-1][0] < losses[0][0]
    for a, b in zip(params_a, params_b):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)


def test_gpflow_sgpr_loss_and_gradients(exla):
    require("gpflow")
    model = workloads.sgpr_model()
    f = exla.function(workloads.sgpr_loss_and_grads(model), threshold=THRESHOLD, strict=True)
    # The reference runs eagerly: the same TensorFlow code without exla (and
    # without a second slow XLA compilation of the gradient program).
    (loss_a, grads_a), (loss_b, grads_b) = f(), workloads.sgpr_loss_and_grads(model)()
    assert ["tensor-splitter" in passes for passes in _ran_rewritten(f)] == [True]
    np.testing.assert_allclose(loss_a, loss_b, rtol=1e-9)
    # The inducing-point gradients are small sums of large cancelling terms
    # (loss ~1e3, gradients ~1e-4): compare them relative to their largest entry.
    for a, b in zip(grads_a, grads_b):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-4 * float(np.max(np.abs(b))))


def test_gpflow_scipy_with_jit_compiled_loss(patched):
    require("gpflow")
    import gpflow
    from exla.tensorflow import patch

    results = []
    for use_exla in (True, False):
        (patch.install if use_exla else patch.uninstall)()
        model = workloads.sgpr_model()
        opt = gpflow.optimizers.Scipy()
        result = opt.minimize(model.training_loss, model.trainable_variables, compile=True,
                              tf_fun_args=dict(jit_compile=True), options=dict(maxiter=5))
        results.append((result.fun, [v.numpy() for v in model.trainable_variables]))
        if use_exla:
            (compiled,) = opt.compile_cache.values()
            programs = compiled._exla_function.programs
            assert programs and programs[0].changed and programs[0].variables_written
            assert programs[0].runs >= 1, "the rewritten loss never ran"
    (loss_a, params_a), (loss_b, params_b) = results
    np.testing.assert_allclose(loss_a, loss_b, rtol=1e-7)
    for a, b in zip(params_a, params_b):  # L-BFGS steps amplify rounding differences a little
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_keras_fit_with_jit_compile(patched):
    require("tf_keras")
    from exla.tensorflow import patch

    x, y = workloads.keras_data(256)  # 4 batches of 64
    weights = []
    for use_exla in (True, False):
        (patch.install if use_exla else patch.uninstall)()
        model = workloads.keras_model()
        earlier = set(patch.wrappers())
        model.fit(x, y, batch_size=64, epochs=2, verbose=0, shuffle=False)
        weights.append(model.get_weights())
        if use_exla:
            # Counted by the rewritten train step itself, once per batch.
            runs = {p.name: p.runs for w in patch.wrappers() if w not in earlier
                    for p in w.programs}
            assert sum(runs.values()) == 8, f"Keras's rewritten step ran {runs} times"
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_thread_safe_signature_cache(exla):
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    inputs = {n: workloads.kmv_inputs(n=n) for n in (300, 400)}
    want = {n: workloads.kernel_matvec(*a).numpy() for n, a in inputs.items()}
    errors = []

    def worker(n):
        try:
            for _ in range(3):
                np.testing.assert_allclose(f(*inputs[n]), want[n], rtol=1e-10)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in (300, 400, 300, 400)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # Each signature's rewritten program ran (counted by itself; concurrent
    # increments of the count are not asserted exact).
    assert len(f.programs) == 2 and all(p.changed and p.runs >= 1 for p in f.programs)


def test_method_and_existing_tf_function(exla):
    class Model:
        def __init__(self):
            self.scale = tf.Variable(tf.constant(2.0, tf.float64))

        @exla.function(threshold=THRESHOLD, strict=True)
        def __call__(self, x, y, v):
            return workloads.kernel_matvec(x, y, v) * self.scale

    args = workloads.kmv_inputs()
    m1, m2 = Model(), Model()
    m2.scale.assign(3.0)
    base = workloads.kernel_matvec(*args)
    np.testing.assert_allclose(m1(*args), base * 2.0, rtol=1e-10)
    np.testing.assert_allclose(m2(*args), base * 3.0, rtol=1e-10)
    # Each instance's method is an exla function of its own, rewritten and run.
    assert _ran_rewritten(m1.__call__) and _ran_rewritten(m2.__call__)

    existing = tf.function(workloads.kernel_matvec)  # not jit: exla compiles it with XLA
    f = exla.function(existing, threshold=THRESHOLD, strict=True)
    np.testing.assert_allclose(f(*args), base, rtol=1e-10)
    assert _ran_rewritten(f)


# -- failures ----------------------------------------------------------------

def _exla_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "exla" and r.levelno == logging.WARNING]


def test_failing_pass_warns_once_and_runs_the_original(exla, monkeypatch, caplog):
    from exla.tensorflow import program  # where exla.function runs optimize_hlo

    def broken(*args, **kwargs):
        raise RuntimeError("injected pass failure")

    monkeypatch.setattr(program, "optimize_hlo", broken)
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD)
    with caplog.at_level(logging.WARNING, logger="exla"):
        for n in (400, 400, 500):
            args = workloads.kmv_inputs(n=n)
            np.testing.assert_allclose(f(*args), workloads.kernel_matvec(*args), rtol=1e-12)
    (message,) = _exla_warnings(caplog)
    assert "kernel_matvec" in message and "injected pass failure" in message


def test_failing_pass_raises_in_strict_mode(exla, monkeypatch):
    from exla.tensorflow import program  # where exla.function runs optimize_hlo
    from exla.tensorflow.exla_function import ExlaError

    monkeypatch.setattr(program, "optimize_hlo",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("injected pass failure")))
    with pytest.raises(ExlaError, match="injected pass failure"):
        exla.function(workloads.kernel_matvec, strict=True)(*workloads.kmv_inputs())
    monkeypatch.setenv("EXLA_STRICT", "1")
    with pytest.raises(ExlaError, match="kernel_matvec"):
        exla.function(workloads.kernel_matvec)(*workloads.kmv_inputs())


def test_broken_artifact_fails_at_run_time_and_falls_back(exla, monkeypatch, caplog):
    from exla.bridge import xla as bridge

    monkeypatch.setattr(bridge, "text_to_portable_artifact", lambda text, target=None: b"broken")
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD)
    args = workloads.kmv_inputs()
    want = workloads.kernel_matvec(*args)
    with caplog.at_level(logging.WARNING, logger="exla"):
        for _ in range(3):
            np.testing.assert_allclose(f(*args), want, rtol=1e-12)
    assert len(_exla_warnings(caplog)) == 1


def test_user_errors_propagate_without_an_exla_warning(exla, caplog):
    def wrong(x):
        return tf.matmul(x, x)  # (3, 2) @ (3, 2): the user's own shape error

    f = exla.function(wrong, threshold=THRESHOLD)
    with caplog.at_level(logging.WARNING, logger="exla"), pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        f(tf.ones([3, 2]))
    assert not _exla_warnings(caplog)


def test_dump_to_writes_every_pass(exla, monkeypatch, tmp_path):
    monkeypatch.setenv("EXLA_DUMP_TO", str(tmp_path))
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    f(*workloads.kmv_inputs())
    (directory,) = tmp_path.iterdir()
    names = sorted(p.name for p in directory.iterdir())
    assert names[0] == "000-input.hlo" and any("tensor-splitter" in n for n in names)
    assert _ran_rewritten(f)  # the dump is written before the run


def test_disabled_passes_are_honoured(exla, monkeypatch):
    # Only an exla pass: TensorFlow may read XLA_FLAGS here, and XLA ignores names it does not know.
    monkeypatch.setenv("XLA_FLAGS", "--xla_disable_hlo_passes=tensor-splitter")
    f = exla.function(workloads.kernel_matvec, threshold=THRESHOLD, strict=True)
    assert "tensor-splitter" not in f.options().passes
    f(*workloads.kmv_inputs())
    assert not any("tensor-splitter" in p.report.changed_passes for p in f.programs)


def test_bad_options_fail_at_decoration(exla):
    with pytest.raises(ValueError, match="invalid size"):
        exla.function(workloads.kernel_matvec, threshold="1XB")
    with pytest.raises(ValueError, match="unknown exla passes"):
        exla.function(workloads.kernel_matvec, passes=["tensor-spliter"])
