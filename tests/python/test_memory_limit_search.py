"""The memory-limit search's order of candidates (python/exla/_memory_limit.py).

XLA's planned memory is replaced by a table keyed by the candidate, so that
each test states which plans fit and checks which one the search keeps; the
real measurements are in test_memory_limit.py.
"""

from __future__ import annotations

from collections import OrderedDict

import pytest

from exla import _memory_limit
from exla.bridge import xla as bridge

pytestmark = pytest.mark.usefixtures("extension")

MODULE = """HloModule {name}

ENTRY main {{
  x = f32[1000,1000] parameter(0)
  ROOT e = f32[1000,1000] exponential(x)
}}
"""
MB = 10**6


def _search(monkeypatch, peak_of, limit=12 * MB, threshold=None):
    """Runs the search with ``peak_of(threshold, large_sums)`` as XLA's temp bytes."""
    calls = []

    def optimize(threshold, split_size, large_sums):
        calls.append((threshold, split_size, large_sums))
        name = f"m_{threshold}_{split_size}_{int(large_sums)}"
        return MODULE.format(name=name), []

    def planned_memory(text, devices=None):
        name = text.split()[1]
        temp = 30 * MB
        if name != "input":
            _, threshold, _, large = name.split("_")
            temp = peak_of(None if threshold == "None" else int(threshold), large == "1")
        return bridge.MemoryStats(temp, 4 * MB, 4 * MB, 0, 0)

    monkeypatch.setattr(bridge, "planned_memory", planned_memory)
    monkeypatch.setattr(_memory_limit, "_cache", OrderedDict())  # no measurement of other tests
    _, _, plan = _memory_limit.search(MODULE.format(name="input"), limit, optimize,
                                      threshold=threshold)
    return plan, calls


def test_large_sums_are_tried_when_no_ordinary_plan_fits(monkeypatch):
    # Ordinary plans stay at 10 MB of temporaries (18 MB in all, over 12 MB);
    # with large sums, thresholds under 1 MB reach 2 MB.
    plan, calls = _search(monkeypatch,
                          lambda t, large: 2 * MB if large and t and t < MB else 10 * MB)
    assert plan.fits and plan.chosen.large_sums
    assert plan.peak_bytes == 10 * MB
    assert "sums above the threshold" in str(plan.chosen)
    first_large = [c[2] for c in calls].index(True)
    assert not any(c[2] for c in calls[:first_large]) and all(c[2] for c in calls[first_large:])


def test_large_sums_are_not_tried_when_an_ordinary_plan_fits(monkeypatch):
    plan, calls = _search(monkeypatch,
                          lambda t, large: 2 * MB if t and t < 2 * MB else 10 * MB)
    assert plan.fits and not plan.chosen.large_sums
    assert not any(large for _, _, large in calls)


def test_large_sums_are_not_tried_under_the_users_threshold(monkeypatch):
    # A threshold the user gave bounds every tensor: no sum may exceed it.
    plan, calls = _search(monkeypatch,
                          lambda t, large: 2 * MB if large and t and t < MB else 10 * MB,
                          threshold=3 * MB)
    assert not plan.fits
    assert not any(large for _, _, large in calls)


def test_large_sums_that_do_not_help_leave_the_smallest_plan(monkeypatch):
    plan, calls = _search(monkeypatch, lambda t, large: 10 * MB if large else 9 * MB)
    assert not plan.fits
    assert plan.peak_bytes == 17 * MB and not plan.chosen.large_sums
    assert any(large for _, _, large in calls)


def _reworded(records: list) -> list:
    """The records with every note's wording changed (its words reversed)."""
    return [(name, changed, seconds, [" ".join(reversed(m.split())) for m in messages], *rest)
            for name, changed, seconds, messages, *rest in records]


@pytest.mark.parametrize("program,limit", [("kmv", "10MB"), ("sorted", "6MB")])
def test_plans_do_not_depend_on_the_wording_of_the_notes(program, limit, kmv_hlo, monkeypatch):
    # The search reads the splitter's records as data: rewording every note
    # must leave the plan, its loops and what it names unchanged.
    import exla
    from exla import _core

    from .test_memory_limit import SORTED_TEMPLATE

    text = kmv_hlo(2000) if program == "kmv" else SORTED_TEMPLATE.format(n=1000)

    def plan_of():
        _, report = exla.optimize_hlo(text, memory_limit=limit, strict=False)
        plan = report.limit_plan
        return (plan.chosen, plan.peak_bytes, plan.fits, plan.split, plan.unsplit,
                [(c.threshold, c.split_size, c.loops, c.recomputed_flops) for c in plan.candidates])

    plain = plan_of()
    original = _core.optimize
    monkeypatch.setattr(_core, "optimize",
                        lambda *args, **kwargs: (lambda out: (out[0], _reworded(out[1])))(
                            original(*args, **kwargs)))
    reworded = plan_of()
    assert reworded == plain
    assert plain[3] or plain[4], "the plan names no loop and no unsplit tensor"
