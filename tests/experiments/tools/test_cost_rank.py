"""cost_rank's judgement of cases, on figures made up for the purpose: no
plan is timed here (the experiment itself measures; these check the
arithmetic it reports with)."""

from __future__ import annotations

import numpy as np

from experiments.tools import cost_rank


def test_median_interval_of_21_samples_is_the_6th_to_16th():
    samples = [float(x) for x in np.random.default_rng(0).permutation(21)]
    assert cost_rank.median_interval(samples) == (5.0, 15.0)


def test_median_interval_of_few_samples_is_their_range():
    assert cost_rank.median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)


def _plan(threshold: int, predicted: float, measured: float, spread: float) -> dict:
    return {"threshold": threshold, "split_size": None, "dimensions": "", "loops": 1,
            "recomputed_flops": 0, "peak_bytes": 100, "predicted_s": predicted,
            "measured_s": measured, "measured_lo_s": measured - spread,
            "measured_hi_s": measured + spread}


def test_choice_within_the_fastest_plans_interval_is_not_slower():
    # The model picks the plan measured at 1.08 s: 8% off, but inside the noise.
    rows = [_plan(400, 2.0, 1.00, 0.10), _plan(200, 1.0, 1.08, 0.10), _plan(100, 3.0, 2.0, 0.1)]
    [case] = cost_rank.cases(rows)
    assert case["separable"]
    assert case["model_not_slower"] and not case["model_fastest"]
    assert case["old_not_slower"]  # the old order's largest threshold is the fastest


def test_choice_measurably_slower_than_the_fastest_is_counted_slower():
    rows = [_plan(400, 2.0, 1.00, 0.01), _plan(200, 1.0, 1.08, 0.01)]
    [case] = cost_rank.cases(rows)
    assert case["separable"] and not case["model_not_slower"]


def test_cases_without_intervals_are_judged_by_the_margin_alone():
    rows = [_plan(400, 2.0, 1.00, 0.1), _plan(200, 1.0, 1.02, 0.1)]
    for row in rows:
        del row["measured_lo_s"], row["measured_hi_s"]
    [case] = cost_rank.cases(rows)
    assert case["model_fastest"] and "separable" not in case
