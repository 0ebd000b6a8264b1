"""The data of experiments/workloads/sgpr_scale.py: 3droad's shape, reproducible."""

from __future__ import annotations

import numpy as np

from experiments.workloads.sgpr_scale import make_data


def test_data_has_the_paper_split_and_three_inputs_in_the_unit_cube() -> None:
    x, y, xt, yt = make_data(20_000, 5_000)
    assert x.shape == (20_000, 3) and xt.shape == (5_000, 3)
    assert y.shape == (20_000, 1) and yt.shape == (5_000, 1)
    assert x.dtype == y.dtype == np.float64
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert abs(y.mean()) < 1e-12 and abs(y.std() - 1.0) < 1e-12  # standardised on training


def test_third_input_is_a_road_number_the_target_is_piecewise_in() -> None:
    x, y, _, _ = make_data(20_000, 1_000)
    roads = np.unique(x[:, 2])
    assert 500 < len(roads) <= 600
    # Along one road the target varies smoothly with (x1, x2); between roads
    # the offsets differ: the within-road spread is well below the total.
    within = np.mean([y[x[:, 2] == r].std() for r in roads[:50]])
    assert within < 0.9 * y.std()


def test_data_are_reproducible_and_splits_disjoint() -> None:
    a = make_data(5_000, 1_000)
    b = make_data(5_000, 1_000)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    train = {tuple(row) for row in a[0]}
    assert not any(tuple(row) in train for row in a[2])
