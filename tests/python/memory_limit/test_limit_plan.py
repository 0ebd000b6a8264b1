"""What a memory-limit search reports (python/exla/memory_limit/limit_plan.py): the lines of
:meth:`LimitPlan.summary`, printed from its fields."""

from __future__ import annotations

import pytest

from exla.memory_limit.limit_plan import _UNSPLIT_SHOWN, LimitPlan
from exla.memory_limit.runtime_memory import RuntimeCost

MB = 10**6


def test_runtime_cost_line_is_printed_from_its_fields():
    plan = LimitPlan(limit=10**9, runtime_cost=RuntimeCost("TensorFlow", 900_000_000,
                                                           50_000_000, 0.125))
    assert ("the process holds about 950 MB more: TensorFlow's runtime, measured once in this "
            "process (resident 900 MB, 50 MB to compile and run a jit program; 0.12 s)"
            ) in "\n".join(plan.summary())
    jax_cost = RuntimeCost("JAX", 700_000_000, 0, 0.0)
    assert jax_cost.summary().startswith("the process holds about 700 MB more: JAX's runtime")
    assert "jit program" not in jax_cost.summary()


@pytest.mark.parametrize("fits", [True, False])
def test_report_lists_every_whole_tensor_only_when_the_limit_is_missed(fits):
    unsplit = [f"main/m{i} (dot) f64[100,100] 80 KB: reason" for i in range(12)]
    plan = LimitPlan(limit=MB, peak_bytes=MB if fits else 2 * MB, fits=fits, unsplit=unsplit)
    shown = [line for line in plan.summary() if line.startswith("    main/m")]
    if fits:
        assert shown == [f"    {line}" for line in unsplit[:_UNSPLIT_SHOWN]]
        assert any("12 instruction(s), within the limit" in line for line in plan.summary())
    else:
        assert shown == [f"    {line}" for line in unsplit]
