"""The algebraic-rewriter's rule for large structured constants on a real
program: GPflow's SGPR loss and gradients, whose HLO holds the M x M f64
matrices TensorFlow folds into literals (`jitter * I`, identity right-hand
sides of triangular solves).

The rewritten program must compute exactly what the original computes (the
rebuilt values are the literal's bit for bit, so the outputs are equal, not
close), agree with TensorFlow's own run of the model, and make XLA's buffer
assignment hold less constant memory, without more memory in total.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pass_tools as tools  # noqa: E402

_exla = tools.load_extension()

M = 400  # inducing points: each M x M f64 literal is 1.28 MB, above 1 MiB
_SQUARE_CONSTANT = re.compile(rf"= f64\[{M},{M}\]\S* constant\(")


@pytest.fixture(scope="module")
def sgpr():
    from experiments.corpus import programs

    fn = programs.sgpr_function(n=1000, m=M)
    return programs._tf_program("sgpr_m400", fn, [], rtol=1e-9, atol=1e-9)


def test_sgpr_constants_are_rebuilt_exactly(sgpr):
    original = sgpr.hlo_text
    folded = len(_SQUARE_CONSTANT.findall(original))
    assert folded >= 2, "TensorFlow no longer folds SGPR's M x M matrices"
    rewritten, changed = tools.run_passes(original, ["algebraic-rewriter"])
    assert changed
    assert not _SQUARE_CONSTANT.search(rewritten)
    assert " iota(" in rewritten and " select(" in rewritten

    before = tools.execute(original, sgpr.inputs)
    after = tools.execute(rewritten, sgpr.inputs)
    for b, a, reference in zip(before, after, sgpr.reference_outputs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, reference, rtol=1e-9, atol=1e-9)


def test_sgpr_constant_memory_shrinks(sgpr):
    original = sgpr.hlo_text
    rewritten, _ = tools.run_passes(original, ["algebraic-rewriter"])
    before = tools.compiled_memory(original)
    after = tools.compiled_memory(rewritten)
    print(f"\nSGPR M={M}: XLA constants {before['constants'] / 1e6:.3f} MB -> "
          f"{after['constants'] / 1e6:.3f} MB, temporaries {before['temp'] / 1e6:.3f} MB "
          f"-> {after['temp'] / 1e6:.3f} MB")
    folded = len(_SQUARE_CONSTANT.findall(original)) * M * M * 8
    assert before["constants"] - after["constants"] >= folded
    assert sum(after.values()) < sum(before.values())
