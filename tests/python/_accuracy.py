"""How the tests judge a rewritten program's numbers against a float64 reference.

A rewrite may reassociate sums (loops accumulate slice by slice), so its
results differ from the unrewritten program's by rounding. They must not be
worse than that program's own rounding: normwise, the rewritten result is
as close to the float64 reference as the unrewritten one, within 4x (both
are roundings of the same value; 4x leaves room for one draw of the error).
The float64 references that several tests share are here too.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def assert_as_close_to(reference: Sequence, actual: Sequence, expected: Sequence, *,
                       atol_fraction: float | None = None) -> None:
    """Each ``actual`` result is as close to its ``reference`` as ``expected`` is.

    Args:
      reference: float64 results.
      actual: the rewritten program's results.
      expected: the unrewritten program's results.
      atol_fraction: if given, each actual result is also elementwise close
        to the expected one: ``rtol=1e-4``, ``atol`` this fraction of the
        largest expected magnitude.
    """
    assert len(actual) == len(expected) == len(reference)
    for a, e, r in zip(actual, expected, reference):
        a, e, r = (np.ravel(np.asarray(x, np.float64)) for x in (a, e, r))
        error = np.linalg.norm(a - r) / np.linalg.norm(r)
        yardstick = np.linalg.norm(e - r) / np.linalg.norm(r)
        assert error <= 4 * yardstick + 1e-7, (error, yardstick)
        if atol_fraction is not None:
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=atol_fraction * np.abs(e).max())


def cross_entropy64(h: np.ndarray, w: np.ndarray, labels: np.ndarray) -> list:
    """The mean sparse softmax cross entropy of the logits ``h @ w`` and its gradients
    with respect to ``h`` and ``w``, in float64: ``[loss, dh, dw]``."""
    logits = h.astype(np.float64) @ w.astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(len(labels))
    loss = -np.log(p[rows, labels]).mean()
    p[rows, labels] -= 1
    p /= len(labels)
    return [loss, p @ w.T.astype(np.float64), h.T.astype(np.float64) @ p]
