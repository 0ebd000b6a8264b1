"""A memory limit's plans are confirmed by the backend that runs the program.

There is no GPU here, so the test makes JAX's CPU backend report another
platform: exla must then take every XLA figure from the program's own
compile (``Program.planned_memory``) and never from its CPU planner, and say
so in the report.
"""

from __future__ import annotations

import logging

import jax
import numpy as np
import pytest

import exla
from exla.memory_limit import planner
from exla.jax import compile_hook
from exla.bridge import jax as jax_bridge
from exla.bridge import xla as xla_bridge
from tests.python.jax._workloads import WORKLOADS

pytestmark = pytest.mark.usefixtures("extension")


def _peak(compiled) -> int:
    m = compiled.memory_analysis()
    return int(m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes
               - m.alias_size_in_bytes)


@pytest.fixture
def pretend_gpu(monkeypatch):
    """JAX's programs claim the "cuda" platform; every backend compile exla
    makes for figures is counted; exla's CPU planner fails if used."""
    compiles: list[str] = []
    planned = jax_bridge.Program.planned_memory

    def counted(self, text):
        stats = planned(self, text)
        compiles.append(stats.platform)
        return stats

    def no_cpu_planner(*args, **kwargs):
        raise AssertionError("the CPU planner was used for a program of another backend")

    monkeypatch.setattr(jax_bridge.Program, "platform", property(lambda self: "cuda"))
    monkeypatch.setattr(jax_bridge.Program, "planned_memory", counted)
    monkeypatch.setattr(xla_bridge, "planned_memory", no_cpu_planner)
    return compiles


def test_plans_are_confirmed_by_the_programs_backend(pretend_gpu, caplog):
    fn = WORKLOADS["kernel_matvec_grads"][0]
    rng = np.random.default_rng(0)
    x, v = rng.random((1000, 3), np.float32), rng.random((1000, 1), np.float32)
    plain = jax.jit(fn).lower(x, v).compile()
    before = len(compile_hook.rewritten_programs())
    with caplog.at_level(logging.INFO, logger="exla"):
        ours = exla.jit(fn, memory_limit="4MB", strict=True).lower(x, v).compile()
    assert len(compile_hook.rewritten_programs()) == before + 1  # exla's program is what runs
    assert pretend_gpu and set(pretend_gpu) == {"cuda"}  # figures from the backend's compile
    assert _peak(ours) <= 4_000_000 < _peak(plain)
    for a, b in zip(jax.tree.leaves(ours(x, v)), jax.tree.leaves(plain(x, v))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


def test_the_report_says_whose_compile_gave_the_figures(pretend_gpu):
    from exla.memory_limit.limit_plan import LimitPlan

    plan = LimitPlan(limit=4_000_000, platform="cuda")
    text = "\n".join(plan.summary())
    assert "XLA's cuda compile" in text and "mirror XLA CPU" in text
    assert "cuda compilation(s)" in text


def test_the_cpu_planner_is_the_default_outside_a_frontend():
    assert planner.current().platform == "cpu"
    with planner.planning_on(planner.Planner("cuda", "cuda:1", lambda text: None)):
        assert planner.current().platform == "cuda"
    assert planner.current().platform == "cpu"
