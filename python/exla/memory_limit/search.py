"""The program-level memory limit: a search over the splitter's plans.

The C++ passes guarantee a size per tensor (``threshold``) and work on slices
of ``split_size``; what a user can state is a budget for the whole program.
XLA's own buffer assignment decides how much memory a program needs (several
tensors live at once, fusion removes others), so no closed formula maps a
budget to a threshold. This module searches in two ways.

Guided by exla's models (the default, :func:`search` with ``models``): the
C++ plan search (cc/search/plan_search.h, read by :mod:`exla.memory_limit.model_plans`)
judges plans (thresholds, slice sizes, the dimension of each loop, and
which values its loops compute again to keep whole instead) with the memory
and cost models, without compiling; the cheapest plan predicted
to fit (:func:`_best`) is compiled once for XLA's figure, and a second time,
after the plans are judged against a target corrected by the model's error,
if XLA plans it above the limit.

Measured (when the models miss twice, see no plan that fits, or are not
given): the same C++ plan search runs with XLA as its judge
(``search_plans_judged``): each plan it considers is optimised with
``optimize`` and measured by compiling it (:func:`planned_memory_cached`, the
backend in force); the cheapest plan whose planned peak fits is kept. XLA
judges the threshold ladder only (the halving from the room the limit leaves
above the program's arguments and outputs, the bisection towards larger
chunks, larger slices, sums above the threshold where nothing else fits; see
cc/search/plan_search.h), not the structural variations, at a compile each.
At most :data:`MAX_CANDIDATES` XLA compilations are spent per module.

Cost of a plan: exla's cost model (:func:`exla.predict.predict_cost`: each
kernel's flops and bytes, loops multiplied by their trips, a re-read within
the last-level cache's reach at the cache's speed, an update in place by the
rows it crosses; rates calibrated on this machine) chooses the plan it
predicts fastest; the order used before the cost model (the work its loops
compute again, from the splitter's records, then the number of ``while``
loops, then the slice size and the threshold, larger being better: fewer
iterations, larger matrix products) only breaks ties (:data:`CLEAR_GAIN`).
How often the model's choice is the fastest plan is measured by
``python -m experiments cost_rank`` (its section of ``experiments/RESULTS.md``
is generated from the run's results file; no figure is kept here, where it
would go stale). Gains of a few percent are within the model's error, either
way, and the model is calibrated with jaxlib's XLA, whose emitters differ from
TensorFlow's in places (``cc/model/cost/cost_model.cc``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable

from exla import _core
from exla._splitter_result import SplitterResult, of_records
from exla._values import format_size
from exla.errors import MemoryLimitError
from exla.memory_limit import floor, planner, runtime_memory
from exla.memory_limit.limit_plan import Candidate, LimitPlan
from exla.memory_limit.messages import split_loops, unsplit_instructions
from exla.predict import predict_time

if TYPE_CHECKING:  # the C++ records, loaded with the extension on first use
    from exla._exla import PlanCandidate, PlanSearchResult

__all__ = ["search", "planned_memory_cached", "MAX_CANDIDATES", "CONFIRMATIONS"]

_log = logging.getLogger("exla")

MAX_CANDIDATES = 12
"""Most XLA compilations the search spends on one module (the input included)."""

# XLA's planned memory per module text; compiling is the search's main cost and
# the same text comes back (the same module for several thresholds, or the same
# function traced again).
_CACHE_SIZE = 256
_cache: "OrderedDict[str, object]" = OrderedDict()
_cache_lock = threading.Lock()


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def planned_memory_cached(text: str, plan: LimitPlan | None = None):
    """XLA's planned memory of ``text`` from the backend in force
    (:func:`exla.memory_limit.planner.current`: the CPU unless a frontend says otherwise),
    with a cache; counts compiles in ``plan``."""
    in_force = planner.current()
    key = in_force.key + ":" + _key(text)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    start = time.perf_counter()
    stats = in_force.memory(text)
    if plan is not None:
        plan.xla_compiles += 1
        plan.xla_seconds += time.perf_counter() - start
    with _cache_lock:
        _cache[key] = stats
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return stats


def _slice_bytes(candidate: Candidate) -> int:
    """The split size a candidate's loops work with (the splitter's default when unset)."""
    if candidate.split_size:
        return candidate.split_size
    return (candidate.threshold or 0) // 4


Optimize = Callable[..., Any]
"""``optimize(threshold, split_size, large_sums[, dimensions][, tile_size=])
-> OptimizedModule``: the C++ pipeline with one plan's settings (``dimensions``,
``{"computation/instruction": dimension}``, and ``tile_size`` are passed only
when a plan sets them)."""

Refusals = Callable[[int], Any]
"""``refusals(threshold) -> OptimizedModule``: the pipeline at one threshold,
whose splitter records say what no rule splits (nothing is compiled)."""

Models = Callable[[int], "PlanSearchResult"]
"""``models(target) -> PlanSearchResult``: the C++ plan search, judging plans
against a predicted peak of ``target`` bytes (:func:`exla.memory_limit.model_plans.search`)."""

CONFIRMATIONS = 2
"""XLA compilations the model-guided search spends confirming its choice: the
winner, then, where XLA planned it over the limit, the winner of a search
whose target is corrected by the error XLA showed (before plans are measured
one by one), or, where XLA planned it well within, a faster plan that target
admits (:data:`ROOM_GAIN`)."""

_CORRECTION_MARGIN = 0.97  # aim a little below the corrected target

NEAR_MISS = 1.05
"""Where no plan is predicted to fit, those predicted within this factor of
the limit are ranked as if they did (the memory model's error on exla's loops
is of this order): SGPR M = 5,000 under 2GB, the plan with slices of 1,000
columns was predicted 0.2% over and is planned 1.85 GB by XLA, while the
smallest prediction has slices of 125 columns and runs slower. Where plans
are predicted to fit, a near miss is still compiled first when it saves
work that all of them repeat (:func:`_saves_work`): attention's gradients
under 2MB in one pass are predicted at 2.06 MB and planned 1.93 MB by XLA,
while every plan predicted to fit computes the scores twice."""

ROOM_GAIN = 1.1
"""Where XLA plans the confirmed plan below the model's figure, how much
faster the cost model must predict a plan that fits the target corrected by
that error for the search to compile it too: SGPR M = 5,000 under 1600MB,
the plan with slices of 125 columns was predicted 1.62 GB and planned
1.45 GB by XLA, while the one with slices of 1,000 columns, predicted
1.69 GB, is predicted 1.4x faster."""

MODEL_AGREES = 0.9
"""Where no plan is predicted to fit and XLA plans the smallest at least this
fraction of the model's figure, the models' verdict stands: no plan fits."""


def search(text: str, limit: int, optimize: Optimize,
           *, threshold: int | None = None, split_size: int | None = None,
           models: Models | None = None,
           refusals: Refusals | None = None) -> tuple[str, list, LimitPlan]:
    """Finds the cheapest plan whose rewritten module fits ``limit``.

    With ``models``, exla's memory and cost models choose: the C++ search
    judges plans (thresholds, slice sizes, the dimension of each loop)
    without compiling, the best that fits is compiled once for XLA's figure,
    and if XLA plans more than the limit, the search runs again with its
    target lowered by the model's error on that plan and its winner is
    compiled; if XLA plans less than the model, a plan predicted faster that
    fits the target raised by that error is compiled too, and kept if it fits
    (at most :data:`CONFIRMATIONS` compilations). Only if both miss,
    or the models see no plan that fits, are plans measured with XLA one by
    one (the same C++ search judged by XLA, see the module's docstring).
    The search then hands the free memory its compilations left back to the
    system and records what stayed resident (``plan.residue``).

    Args:
      text: the input module.
      limit: the limit in bytes on XLA's planned peak.
      optimize: runs the pipeline for one candidate.
      threshold: the user's per-tensor threshold: candidates never exceed it.
      split_size: the user's split size: kept fixed.
      models: the C++ plan search (None: measure plans with XLA alone).
      refusals: the splitter's refusals at a threshold, for the floor
        (None: the chosen plan's alone).

    Returns:
      ``(text, records, plan)`` of the chosen candidate (the one with the
      smallest peak when none fits).

    Raises:
      exla.MemoryLimitError: ``limit`` is below the program's arguments plus outputs.
    """
    run = _LimitSearch(text, limit, optimize, threshold, split_size, models, refusals).run
    (out, records, plan), residue = runtime_memory.around_search(run)
    plan.residue = residue
    return out, records, plan


CLEAR_GAIN = 1.0
"""How much faster the cost model must predict a plan than the structural
order's choice to overrule it: 1.0, the model decides and the order breaks
ties (see the module's docstring; 1.1 and 1.5 chose worse plans)."""

NEAR_MISS_GAIN = 1.5
"""How much faster the cost model must predict a near miss than the best
plan that fits for the near miss to be compiled first: XLA may plan it over
the limit, and the search then spends a second compile."""


def _cost(candidate: Candidate) -> tuple:
    """The structural order of fitting plans: the least repeated work, then
    the fewest loops, then the largest slices (fewer iterations, larger matrix
    products), then the largest threshold, then the splitter's own plans
    over those the plan search varied (loops moved, values kept whole); the
    shortest predicted time breaks what is left of a tie."""
    return (candidate.recomputed_flops, candidate.loops, -_slice_bytes(candidate),
            -(candidate.threshold or 2**63), bool(candidate.dimensions),
            candidate.predicted_seconds)


def _best(fitting: list[Candidate]) -> Candidate:
    """The plan to run: the structural order's first, unless the cost model
    predicts another to be more than CLEAR_GAIN times faster (then the
    fastest predicted)."""
    first = min(fitting, key=_cost)
    fastest = min(fitting, key=lambda c: (c.predicted_seconds, _cost(c)))
    return fastest if first.predicted_seconds > CLEAR_GAIN * fastest.predicted_seconds else first


def _saves_work(near: Candidate, fitting: Candidate) -> bool:
    """Whether a near miss is worth a compile before the plan that fits: it
    computes less again and the cost model does not predict it slower, or
    the cost model predicts it NEAR_MISS_GAIN faster. (A value kept whole can
    save a sliver of the work for extra loops that cost more: SGPR's
    exponential kept whole saved 0.7% of what its plan recomputed, predicted
    slower, and XLA then planned it over the limit.)"""
    return ((near.recomputed_flops < fitting.recomputed_flops and
             near.predicted_seconds <= fitting.predicted_seconds) or
            fitting.predicted_seconds > NEAR_MISS_GAIN * near.predicted_seconds)


def _model_choice(plans: list[PlanCandidate], target: int,
                  near_misses: bool = True) -> PlanCandidate | None:
    """The plan to compile: of those the models predict to fit, the one
    :func:`_best` ranks first, unless one predicted within NEAR_MISS of the
    target saves work it repeats (``near_misses``); with none that fits, the
    best of the near misses, else the smallest predicted peak (the models
    err both ways, so XLA may still find it fits)."""
    fitting = [(_as_candidate(p), p) for p in plans if p.fits]
    near = [(_as_candidate(p), p) for p in plans
            if not p.fits and p.peak_bytes <= NEAR_MISS * target] if near_misses else []
    if fitting and near:
        best_fit, best_near = _best([c for c, _ in fitting]), _best([c for c, _ in near])
        if _saves_work(best_near, best_fit):
            return next(p for c, p in near if c is best_near)
    fitting = fitting or near
    if fitting:
        best = _best([c for c, _ in fitting])
        return next(p for c, p in fitting if c is best)
    # On a tie, the smallest threshold: its splitter records name what stays too large.
    # (A threshold of 0 is none.)
    return min(plans, default=None, key=lambda p: (
        p.peak_bytes, p.settings.threshold == 0, p.settings.threshold))


SettingsKey = tuple[int | None, int | None, bool, tuple[tuple[str, int], ...], int | None]


def _settings_key(settings: Any) -> SettingsKey:
    """A C++ ``PlanSettings`` in the search's terms (:class:`Candidate`'s and
    :meth:`_LimitSearch.measure`'s): None for a threshold, slice size or tile
    size left unset (0 in C++), the dimensions as sorted pairs."""
    return (settings.threshold or None, settings.split_size or None, settings.large_sums,
            tuple(sorted(settings.dimensions.items())), settings.tile_size or None)


def _as_candidate(plan: PlanCandidate) -> Candidate:
    """A model plan in the search's terms, its peak the predicted one (for ranking)."""
    threshold, split_size, large_sums, dimensions, tile_size = _settings_key(plan.settings)
    return Candidate(threshold, split_size, plan.peak_bytes, len(plan.loops), plan.fits,
                     plan.recomputed_flops, large_sums, plan.predicted_seconds,
                     plan.peak_bytes, dimensions, tile_size)


def _predicted_seconds(text: str) -> float:
    """The cost model's time for a module (microseconds to compute, no compile)."""
    return predict_time(text)


class _LimitSearch:
    """One run of :func:`search`: the candidates measured so far and the plan."""

    def __init__(self, text: str, limit: int, optimize: Optimize, threshold: int | None,
                 split_size: int | None, models: Models | None = None,
                 refusals: Refusals | None = None) -> None:
        self.text, self.limit, self.optimize, self.models = text, limit, optimize, models
        self.refusals = refusals
        self.threshold, self.split_size = threshold, split_size
        self.plan = LimitPlan(limit=limit, platform=planner.current().platform)
        self.results: dict[tuple, tuple[str, list, Candidate]] = {}
        # XLA's figures of the first module compiled: every rewrite shares
        # the program's arguments and outputs, which the floor states.
        self.first_stats: Any = None

    def run(self) -> tuple[str, list, LimitPlan]:
        if self.models is not None and self._guided():
            return self.choose()
        self._check_floor()
        # The user's own settings are always measured (none: clean-ups only).
        budget = max(MAX_CANDIDATES - self.plan.xla_compiles, 1)
        _core.search_plans_judged(self.text, self._judge_by_xla, floor_bytes=self.plan.floor_bytes,
                                  target=self.limit, threshold=self.threshold,
                                  split_size=self.split_size, max_plans=budget)
        return self.choose()

    def _judge_by_xla(self, settings: Any) -> Any:
        """The C++ search's judge (a ``PlanSettings`` in, a ``Judgement``
        out): the plan run with ``optimize`` and compiled by XLA."""
        _, records, candidate = self.measure(*_settings_key(settings))
        splitter = of_records(records)
        cleanups = set(_core.cleanup_passes())
        return _core.extension().Judgement(
            peak_bytes=candidate.peak_bytes, predicted_seconds=candidate.predicted_seconds,
            changed=any(r.changed and r.name not in cleanups for r in records),
            loops=splitter.loops, recomputed_flops=candidate.recomputed_flops,
            program_flops=splitter.program_flops)

    def _guided(self) -> bool:
        """The model-guided search; True when it settled the plan (XLA
        confirmed one that fits, or confirmed the models' verdict that none
        does), False when plans must be measured with XLA one by one."""
        target, found, near_misses = self.limit, None, True
        considered: list[PlanCandidate] = []
        for confirmation in range(CONFIRMATIONS):
            if found is None:
                found = self._judge(target)
                # Plans judged against an earlier target compete again under this one.
                considered = [p._replace(fits=p.peak_bytes <= target)
                              for p in considered + list(found.plans)]
            best = _model_choice(considered, target, near_misses)
            if best is None:
                return False
            candidate = self._confirm(best)
            if candidate.fits:
                if confirmation + 1 < CONFIRMATIONS:
                    self._faster_with_room(considered, best, candidate)
                return True
            if not best.fits:
                smallest = _model_choice(considered, target, near_misses=False)
                if smallest is not best:
                    near_misses = False  # a near miss missed: the models' own choice next
                    continue
                # No plan is predicted to fit, and XLA agrees on the smallest:
                # measuring the same plans with XLA would only say so again,
                # at a compile each. A model that was pessimistic on it may be
                # on the others too: then XLA measures them.
                return candidate.peak_bytes >= MODEL_AGREES * best.peak_bytes
            _log.info("exla: memory limit %s: the memory model predicted %s for the plan, XLA "
                      "plans %s; searching again with a corrected target", format_size(self.limit),
                      format_size(best.peak_bytes), format_size(candidate.peak_bytes))
            target = self._corrected_target(best, candidate)
            if target <= found.floor_bytes:
                return False
            found = None
        return False

    def _corrected_target(self, best: PlanCandidate, confirmed: Candidate) -> int:
        """The limit scaled by the memory model's error on ``best`` (its
        prediction over XLA's figure), a little below."""
        return int(self.limit * best.peak_bytes / confirmed.peak_bytes * _CORRECTION_MARGIN)

    def _faster_with_room(self, considered: list[PlanCandidate], best: PlanCandidate,
                          confirmed: Candidate) -> None:
        """Spends the second compile on a faster plan where XLA planned the
        confirmed one below the model's figure: the same correction as for a
        miss, the other way, may admit plans with larger slices. Kept only if
        XLA plans it within the limit (:meth:`choose` ranks both)."""
        if confirmed.peak_bytes >= best.peak_bytes:
            return
        target = self._corrected_target(best, confirmed)
        rejudged = [p._replace(fits=p.peak_bytes <= target) for p in considered]
        faster = _model_choice(rejudged, target, near_misses=False)
        if (faster is None or _settings_key(faster.settings) == _settings_key(best.settings)
                or faster.predicted_seconds * ROOM_GAIN > best.predicted_seconds):
            return
        _log.info("exla: memory limit %s: XLA plans %s where the memory model predicted %s; "
                  "compiling a plan predicted %.2fx faster against the corrected target %s",
                  format_size(self.limit), format_size(confirmed.peak_bytes),
                  format_size(best.peak_bytes), best.predicted_seconds / faster.predicted_seconds,
                  format_size(target))
        self._confirm(faster)

    def _judge(self, target: int) -> PlanSearchResult:
        """The C++ plan search against ``target``, recorded in the plan."""
        found = self.models(target)
        first = not self.plan.model_candidates
        self.plan.model_candidates += [_as_candidate(p) for p in found.plans]
        self.plan.model_seconds += found.seconds
        if first:
            self._model_floor(found)
        return found

    def _confirm(self, best: PlanCandidate) -> Candidate:
        """XLA's compile of the plan the models chose."""
        _, _, candidate = self.measure(*_settings_key(best.settings), predicted_peak=best.peak_bytes)
        if best.origin == "user settings" and not best.changed:
            self.plan.peak_bytes_before = candidate.peak_bytes  # the input, compiled
            self.plan.before_predicted = False
        return candidate

    def _model_floor(self, found: PlanSearchResult) -> None:
        """The input's figures from the models (no compile), and the floor check."""
        plan = self.plan
        plan.peak_bytes_before = found.before.peak_bytes
        plan.before_predicted = True
        plan.predicted_seconds_before = found.seconds_before
        plan.floor_bytes = found.floor_bytes
        self._refuse_below_floor()

    def _check_floor(self) -> None:
        plan = self.plan
        before = self._planned_memory(self.text)
        plan.peak_bytes_before = before.total_bytes
        plan.before_predicted = False
        plan.predicted_seconds_before = _predicted_seconds(self.text)
        plan.floor_bytes = before.argument_bytes + before.output_bytes - before.alias_bytes
        self._refuse_below_floor()

    def _refuse_below_floor(self) -> None:
        plan = self.plan
        if self.limit < plan.floor_bytes:
            raise MemoryLimitError(
                f"memory limit {format_size(self.limit)} ({self.limit} bytes) is below the "
                f"program's own arguments and outputs, {format_size(plan.floor_bytes)} "
                f"({plan.floor_bytes} bytes): no rewrite can fit it")

    def measure(self, t: int | None, split: int | None = None, large: bool = False,
                dimensions: tuple[tuple[str, int], ...] = (), tile_size: int | None = None,
                *, predicted_peak: int | None = None) -> tuple[str, list, Candidate]:
        """``(text, records, candidate)`` of the plan with threshold ``t``
        (split size: the user's unless given; other sizes are only tried when
        the user gave none), compiled by XLA."""
        split = self.split_size if split is None else split
        key = (t, split, large, dimensions, tile_size)
        if key not in self.results:
            plan = self.plan
            start = time.perf_counter()
            extra = {"tile_size": tile_size} if tile_size else {}
            optimized = (self.optimize(t, split, large, dict(dimensions), **extra) if dimensions
                         else self.optimize(t, split, large, **extra))
            out, records = optimized.text, list(optimized.passes)
            plan.exla_seconds += time.perf_counter() - start
            peak = self._planned_memory(out).total_bytes
            splitter = of_records(records)
            plan.program_flops = max(plan.program_flops, splitter.program_flops)
            candidate = Candidate(t, split, peak, len(splitter.loops), peak <= self.limit,
                                  splitter.recomputed_flops, large, _predicted_seconds(out),
                                  predicted_peak, dimensions, tile_size)
            plan.candidates.append(candidate)
            self.results[key] = (out, records, candidate)
            _log.debug("exla: memory limit %s: %s", format_size(self.limit), candidate)
        return self.results[key]

    def _planned_memory(self, text: str) -> Any:
        stats = planned_memory_cached(text, self.plan)
        self.first_stats = self.first_stats or stats
        return stats

    def _refusals(self, chosen: SplitterResult, out: str) -> list[floor.Unsplittable]:
        """What no rule splits: the chosen plan's refusals, and those of the
        pipeline run once (``self.refusals``) at an eighth of the room the limit
        leaves above the arguments and outputs: the chosen plan may have split
        nothing, or only what its threshold asked (no compile)."""
        found = floor.unsplittable_of(chosen.unsplit, _core.tensor_sizes(out))
        if self.refusals is None:
            return found
        start = time.perf_counter()
        probe = self.refusals(max(self.limit - self.plan.floor_bytes, 8) // 8)
        self.plan.exla_seconds += time.perf_counter() - start
        return found + floor.unsplittable_of(of_records(probe.passes).unsplit,
                                             _core.tensor_sizes(probe.text))

    def choose(self) -> tuple[str, list, LimitPlan]:
        """The cheapest plan that fits, else the one with the smallest peak."""
        fitting = [r for r in self.results.values() if r[2].fits]
        if fitting:
            chosen = _best([r[2] for r in fitting])
            out, records, _ = next(r for r in fitting if r[2] is chosen)
        else:
            # The smallest peak; on a tie, the smallest threshold, whose
            # splitter records name what stays too large.
            out, records, chosen = min(self.results.values(), key=lambda r: (
                r[2].peak_bytes, r[2].threshold is None, r[2].threshold or 0))
        plan = self.plan
        plan.chosen = chosen
        plan.fits = chosen.fits
        plan.peak_bytes = chosen.peak_bytes
        splitter = of_records(records)
        plan.unsplit = unsplit_instructions(splitter, out)
        plan.floor = floor.of_stats(self.first_stats, self._refusals(splitter, out))
        plan.split = split_loops(splitter)
        plan.split_loops = list(splitter.loops)
        return out, records, plan
