"""The C++ plan search's result (cc/search/plan_search.h) in the memory-limit search's terms.

The search runs the pipeline for each plan it considers (a threshold, a
slice size, sums allowed above the threshold, for a loop the dimension it
runs along, and for a value its loops compute again whether to keep it whole
instead) and judges each rewritten module with exla's memory model (XLA's
planned peak, constants included) and cost model (its time), without an XLA
compile. :mod:`exla.memory_limit.search` ranks the plans that fit and has XLA
confirm the winner.

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
>>> found.predicted_peak_before > 4_000_000, found.floor_bytes
(True, 40000)
>>> best = min((p for p in found.plans if p.fits), key=lambda p: p.predicted_peak_bytes)
>>> best.predicted_peak_bytes <= 1_000_000 and len(best.loops) >= 1
True
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from exla import _core

if TYPE_CHECKING:
    from exla._exla import SplitLoop

__all__ = ["PlanSettings", "ModelPlan", "PlanSearch", "of_result", "search", "MAX_PLANS",
           "KEEP_WHOLE", "TWO_PASS"]

MAX_PLANS = 32
"""Pipeline runs the C++ search spends on one module."""

KEEP_WHOLE = -1
"""A tensor's entry in :attr:`PlanSettings.dimensions` that keeps it whole:
the splitter's loops read its slices instead of computing it again
(``kKeepWhole`` in cc/passes/tensor_splitter/tensor_splitter.h)."""

TWO_PASS = -2
"""A softmax-weighted sum's entry in :attr:`PlanSettings.dimensions` that
leaves it to a second pass over the logits instead of accumulating it in the
loop of the softmax's statistics (``kTwoPass`` in
cc/passes/tensor_splitter/split_choices.h)."""


@dataclasses.dataclass(frozen=True)
class PlanSettings:
    """The splitter settings of one plan.

    Attributes:
      threshold: the per-tensor threshold (None: the user's settings alone).
      split_size: the slice size in loop bodies (None: the splitter's default).
      large_sums: sums may be accumulated above the threshold.
      dimensions: ``(("computation/instruction", dimension), ...)``: the
        dimension the loop over that tensor runs along, where the splitter
        would otherwise take the longest, or :data:`KEEP_WHOLE`, or for a
        softmax-weighted sum :data:`TWO_PASS`.
    """

    threshold: int | None = None
    split_size: int | None = None
    large_sums: bool = False
    dimensions: tuple[tuple[str, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class ModelPlan:
    """One plan and what exla's models predict for it."""

    settings: PlanSettings
    origin: str  # why the search tried it ("halving", "other dimension", ...)
    predicted_peak_bytes: int  # the memory model: arguments + outputs - aliased + temps + constants
    predicted_seconds: float  # the cost model
    fits: bool  # predicted_peak_bytes is within the search's target
    changed: bool  # a pass other than a clean-up changed the module
    loops: tuple[SplitLoop, ...]
    recomputed_flops: int
    program_flops: int
    seconds: float  # the pipeline and the models for this plan


@dataclasses.dataclass(frozen=True)
class PlanSearch:
    """Every plan the C++ search considered, in order."""

    predicted_peak_before: int  # the input module, by the memory model
    predicted_seconds_before: float
    floor_bytes: int  # arguments + outputs - aliased: no plan goes below
    plans: tuple[ModelPlan, ...]
    seconds: float  # the whole search


def _settings(settings: Any) -> PlanSettings:
    return PlanSettings(settings.threshold or None, settings.split_size or None,
                        settings.large_sums, tuple(sorted(settings.dimensions.items())))


def _plan(plan: Any) -> ModelPlan:
    return ModelPlan(_settings(plan.settings), plan.origin, plan.peak_bytes,
                     plan.predicted_seconds, plan.fits, plan.changed, plan.loops,
                     plan.recomputed_flops, plan.program_flops, plan.seconds)


def of_result(result: Any) -> PlanSearch:
    """The search's form of the C++ core's ``PlanSearchResult``: None for a
    setting left to the user, dimensions as sorted pairs."""
    return PlanSearch(result.before.peak_bytes, result.seconds_before, result.floor_bytes,
                      tuple(_plan(p) for p in result.plans), result.seconds)


def search(text: str, options: Any, target: int, *, threshold: int | None = None,
           split_size: int | None = None, max_plans: int = MAX_PLANS) -> PlanSearch:
    """Plans of ``text`` under ``options`` (an :class:`exla.options.Options`:
    its passes), judged against a predicted peak of ``target`` bytes;
    ``threshold`` bounds every plan's, ``split_size`` is kept."""
    return of_result(_core.search_plans(text, options, target, threshold=threshold,
                                      split_size=split_size, max_plans=max_plans))
