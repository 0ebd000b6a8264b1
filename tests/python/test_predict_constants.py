"""The cost model's constants as the C++ core takes them from Python
(``exla._core.predict_time(text, constants)``): what experiments use to try
other values than the calibrated ones."""

from __future__ import annotations

import pytest

from exla import _core

# 8 rows by a 1024 x 1024 weight: a thin product, for which the arithmetic
# decides once memory is made fast.
THIN = """HloModule m

ENTRY e {
  a = f32[8,1024]{1,0} parameter(0)
  b = f32[1024,1024]{1,0} parameter(1)
  ROOT d = f32[8,1024]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
FAST = {"dot_f32_flops_per_second": 1e10, "bytes_per_second": 1e15, "cache_bytes": 0,
        "op_seconds": 0}


def test_thin_product_is_charged_by_the_given_power():
    flops = 2 * 8 * 1024 * 1024
    full = _core.predict_time(THIN, {**FAST, "dot_thin_width": 0}).seconds
    thin = _core.predict_time(THIN, {**FAST, "dot_thin_width": 1024,
                                     "dot_thin_exponent": 0.5}).seconds
    assert full == pytest.approx(flops / 1e10)
    assert thin == pytest.approx(full / (8 / 1024) ** 0.5)


def test_calibrated_constants_are_the_default():
    # Every calibrated value, given by name (the path experiments take),
    # predicts what no constants at all predict.
    defaults = _core.extension().CostConstants()
    given = {name: getattr(defaults, name) for name in dir(defaults)
             if not name.startswith("_") and isinstance(getattr(defaults, name), float)}
    assert len(given) >= 10, given
    assert _core.predict_time(THIN, given) == _core.predict_time(THIN)


@pytest.mark.parametrize("name", ["dot_rate", "__class__"])
def test_unknown_constant_is_named(name):
    with pytest.raises(ValueError, match=f"unknown cost model constant '{name}'"):
        _core.predict_time(THIN, {name: 1.0})
