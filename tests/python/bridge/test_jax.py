"""exla.bridge.jax: the one owner of JAX's private compile step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import compiler

from exla.bridge import jax as jax_bridge

pytestmark = pytest.mark.usefixtures("extension")


class _Recorder:
    def __init__(self, text_for=None):
        self.programs, self.failures, self.text_for = [], [], text_for
        self.compiled_names = []

    def rewrite(self, program):
        self.programs.append((program.name, program.function_names, program.num_devices,
                              program.hlo_text()))
        return self.text_for(program) if self.text_for else None

    def compile_failed(self, program, error):
        self.failures.append(error)

    def compiled(self, program):
        self.compiled_names.append(program.name)


@pytest.fixture
def hook():
    previous = jax_bridge.hook_installed()
    yield
    if previous is not None:
        jax_bridge.install_compile_hook(previous)
    else:
        jax_bridge.uninstall_compile_hook()


def test_every_compile_is_seen_and_hlo_text_round_trips(hook):
    def double_plus_one(program):
        # Replace that one program by HLO text of x * 2 + 1 (the rewritten module runs).
        if program.name != "jit_identity_ish":
            return None
        return ("HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
                "ENTRY e { p = f32[3] parameter(0) c = f32[] constant(2) b = f32[3] broadcast(c), "
                "dimensions={} m = f32[3] multiply(p, b) o = f32[] constant(1) ob = f32[3] "
                "broadcast(o), dimensions={} ROOT r = f32[3] add(m, ob) }")

    recorder = _Recorder(double_plus_one)
    jax_bridge.install_compile_hook(recorder)
    assert compiler.backend_compile_and_load is not jax_bridge._original

    @jax.jit
    def identity_ish(x):
        return jax.jit(jnp.sin)(x) * 0 + x

    x = jnp.arange(3.0)
    out = identity_ish(x)
    np.testing.assert_allclose(out, [1.0, 3.0, 5.0])  # the rewritten program ran
    name, functions, devices, text = next(p for p in recorder.programs if p[0] == "jit_identity_ish")
    assert name == "jit_identity_ish" and "sin" in functions and devices == 1
    # The nested jax.jit (a func.call in StableHLO) is inlined in the HLO text.
    assert text.startswith("HloModule jit_identity_ish") and " call(" not in text and "sine(" in text
    assert recorder.failures == []
    assert recorder.compiled_names == ["jit_identity_ish"]  # only the rewritten one


def test_a_rejected_module_reaches_compile_failed(hook):
    recorder = _Recorder(lambda program: "HloModule broken\nENTRY e { ROOT p = f32[] nonsense() }")
    jax_bridge.install_compile_hook(recorder)
    assert float(jax.jit(lambda x: x + 41)(1.0)) == 42.0  # JAX's own module after the failure
    assert len(recorder.failures) == 1 and "nonsense" in str(recorder.failures[0])
    assert recorder.compiled_names == []


def test_uninstall_restores_jax(hook):
    jax_bridge.install_compile_hook(_Recorder())
    jax_bridge.uninstall_compile_hook()
    assert compiler.backend_compile_and_load is jax_bridge._original
    assert jax_bridge.hook_installed() is None
