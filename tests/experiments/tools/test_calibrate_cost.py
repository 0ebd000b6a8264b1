"""calibrate_cost's fit of the thin-product constants, on rates made up for
the purpose (the experiment itself measures them)."""

from __future__ import annotations

import math

import pytest

from experiments.tools import calibrate_cost


@pytest.mark.parametrize("exponent", [0.0, 0.19, 0.5])
def test_thin_fit_recovers_the_power_rates_were_made_with(exponent):
    full = 1e11
    rates = {shape: full * (min(shape) / 1024) ** exponent
             for shape in calibrate_cost.thin_shapes()}
    fitted = calibrate_cost.fit_thin(rates, full)
    assert fitted["dot_thin_width"] == 1024
    assert math.isclose(fitted["dot_thin_exponent"], exponent, abs_tol=1e-9)


def test_thin_fit_of_rates_above_the_full_one_is_no_penalty():
    rates = {shape: 2e11 for shape in calibrate_cost.thin_shapes()}
    assert calibrate_cost.fit_thin(rates, 1e11)["dot_thin_exponent"] == 0.0
