"""The C++ plan search (cc/search/plan_search.h) judged by exla's models.

The search runs the pipeline for each plan it considers (a threshold, a
slice size, sums allowed above the threshold, for a loop the dimension it
runs along, and for a value its loops compute again whether to keep it whole
instead) and judges each rewritten module with exla's memory model (XLA's
planned peak, constants included) and cost model (its time), without an XLA
compile. :mod:`exla.memory_limit.search` ranks the plans that fit and has XLA
confirm the winner.

Its results are the C++ records themselves, read-only (bound in
cc/bindings/records.cc, where each field is described): a
``PlanSearchResult`` holds every ``PlanCandidate`` considered, each with its
``PlanSettings``. As in C++, 0 is an unset threshold or slice size.

>>> from exla import _core
>>> from exla.options import Options
>>> hlo = '''
... HloModule kmv
... ENTRY kmv {
...   x = f32[1000,8] parameter(0)
...   v = f32[1000,1] parameter(1)
...   k = f32[1000,1000] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
...   e = f32[1000,1000] exponential(k)
...   ROOT kv = f32[1000,1] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
... }'''
>>> found = search(hlo.strip(), Options(), 1_000_000)
>>> found.before.peak_bytes > 4_000_000, found.floor_bytes
(True, 40000)
>>> best = min((p for p in found.plans if p.fits), key=lambda p: p.peak_bytes)
>>> best.peak_bytes <= 1_000_000 and len(best.loops) >= 1
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exla import _core

if TYPE_CHECKING:
    from exla._exla import PlanCandidate, PlanSearchResult, PlanSettings

__all__ = ["PlanSettings", "PlanCandidate", "PlanSearchResult", "search", "MAX_PLANS",
           "KEEP_WHOLE", "TWO_PASS"]

__getattr__ = _core.records("PlanSettings", "PlanCandidate", "PlanSearchResult")

MAX_PLANS = 32
"""Pipeline runs the C++ search spends on one module."""

KEEP_WHOLE = -1
"""A tensor's entry in ``PlanSettings.dimensions`` that keeps it whole:
the splitter's loops read its slices instead of computing it again
(``kKeepWhole`` in cc/passes/tensor_splitter/split_choices.h)."""

TWO_PASS = -2
"""A softmax-weighted sum's entry in ``PlanSettings.dimensions`` that
leaves it to a second pass over the logits instead of accumulating it in the
loop of the softmax's statistics (``kTwoPass`` in
cc/passes/tensor_splitter/split_choices.h)."""


def search(text: str, options: Any, target: int, *, threshold: int | None = None,
           split_size: int | None = None, max_plans: int = MAX_PLANS) -> PlanSearchResult:
    """Plans of ``text`` under ``options`` (an :class:`exla.options.Options`:
    its passes), judged against a predicted peak of ``target`` bytes;
    ``threshold`` bounds every plan's, ``split_size`` is kept."""
    return _core.search_plans(text, options, target, threshold=threshold,
                              split_size=split_size, max_plans=max_plans)
