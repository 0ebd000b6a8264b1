"""The program-level memory limit: a search over the splitter's settings.

The C++ passes guarantee a size per tensor (``threshold``) and work on slices
of ``split_size``; what a user can state is a budget for the whole program.
XLA's own buffer assignment decides how much memory a program needs (several
tensors live at once, fusion removes others), so no closed formula maps a
budget to a threshold. This module searches: each candidate ``(threshold,
split_size)`` is optimised with the C++ pipeline and measured by compiling it
for the CPU (:func:`exla.bridge.xla.planned_memory`); the cheapest candidate
whose planned peak fits is kept.

Search: the first threshold is the room the limit leaves above the program's
own arguments and outputs (or the explicit ``threshold`` if smaller); it is
halved until a candidate fits or the peak stops falling, then the gap between
the last threshold that did not fit and the first that did is bisected so that
chunks are as large as the limit allows; where the user set no split size, the
best plan is then tried with slices of half and all of its threshold. If no
threshold fits, the halving is repeated with the splitter allowed to
accumulate sums above the threshold (``large_sums``): a loop over the N
columns of an M x N matrix may then produce its M x M Gram matrix, which the
per-tensor rule refuses below M x M thresholds; such plans are only wanted
when the ordinary ones cannot fit and the user set no threshold, as they give
up the per-tensor bound. At most
:data:`MAX_CANDIDATES` XLA compilations are spent per module.

Cost of a plan: the order used before the cost model (the work its loops
compute again, from the splitter's records, then the number of ``while``
loops, then the slice size and the threshold, larger being better: fewer
iterations, larger matrix products), overruled by exla's cost model
(:func:`exla.predict.predict_cost`: each kernel's flops and bytes, loops
multiplied by their trips, a re-read within the last-level cache's reach at
the cache's speed; rates calibrated on this machine) where the model predicts
a plan :data:`CLEAR_GAIN` times faster than that order's choice, as for a
loop re-reading a weight larger than the cache on every trip. Smaller
predicted differences are not trusted: on the plans of
``experiments/cost_rank.py`` the model's predicted gains were all below 1.4x
where it disagreed with that order, and its choice was then slower as often
as faster (``experiments/RESULTS.md``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

from exla.options import format_size
from exla._splitter_result import SplitLoop, SplitterResult, of_records
from exla.errors import MemoryLimitError

__all__ = ["Candidate", "LimitPlan", "search", "planned_memory_cached", "unsplit_instructions",
           "MAX_CANDIDATES"]

_log = logging.getLogger("exla")

MAX_CANDIDATES = 12
"""Most XLA compilations the search spends on one module (the input included)."""

_MIN_THRESHOLD = 1024  # below this a split only multiplies loop overhead

# XLA's planned memory per module text; compiling is the search's main cost and
# the same text comes back (the same module for several thresholds, or the same
# function traced again).
_CACHE_SIZE = 256
_cache: "OrderedDict[str, object]" = OrderedDict()
_cache_lock = threading.Lock()


@dataclasses.dataclass
class Candidate:
    """One plan the search measured.

    Attributes:
      threshold: the per-tensor threshold given to the passes (None: none).
      split_size: the split size given to the passes (None: the splitter's).
      peak_bytes: XLA's planned peak (temporaries + arguments + outputs -
        aliased) of the rewritten module.
      loops: ``while`` loops the splitter built (nested ones included).
      fits: whether ``peak_bytes`` is at most the limit.
      recomputed_flops: work the loops repeat (producers computed again
        because they stay for other users), from the splitter's notes.
      large_sums: the splitter may accumulate sums above the threshold.
      predicted_seconds: the cost model's time for the rewritten module,
        the first key of the search's order.
    """

    threshold: int | None
    split_size: int | None
    peak_bytes: int
    loops: int
    fits: bool
    recomputed_flops: int = 0
    large_sums: bool = False
    predicted_seconds: float = 0.0

    def __str__(self) -> str:
        split = format_size(self.split_size) if self.split_size else "auto"
        split += ", sums above the threshold" if self.large_sums else ""
        verdict = "fits" if self.fits else "over"
        return (f"threshold {format_size(self.threshold)}, split {split}: peak "
                f"{format_size(self.peak_bytes)}, {self.loops} loop(s), "
                f"{format_flops(self.recomputed_flops)} recomputed, predicted "
                f"{format_seconds(self.predicted_seconds)}, {verdict}")


@dataclasses.dataclass
class LimitPlan:
    """What the search under a memory limit found.

    Attributes:
      limit: the limit in bytes.
      floor_bytes: the program's own arguments plus outputs (not aliased):
        no plan can go below it.
      peak_bytes_before: XLA's planned peak of the input module.
      peak_bytes: the planned peak of the plan chosen.
      fits: whether the chosen plan meets the limit.
      chosen: the chosen candidate (the smallest peak when none fits).
      candidates: every candidate measured, in order.
      xla_compiles: XLA compilations done (cached measurements not counted).
      xla_seconds: time in those compilations.
      exla_seconds: time in exla's own passes during the search.
      unsplit: the splitter's notes on the instructions it left above the
        threshold in the chosen plan (see :func:`unsplit_instructions`).
      split: the loops of the chosen plan, one line each from the
        splitter's notes: the instruction, the dimension and the chunks, and
        what the loop computes again.
      split_loops: the same loops as data (``exla._splitter_result.SplitLoop``:
        the tensor, the dimension, its extent and the chunks), for code.
      program_flops: the input program's arithmetic, the yardstick for
        ``chosen.recomputed_flops``.
      predicted_seconds_before: the cost model's time for the input module
        (``chosen.predicted_seconds`` is the plan's).
      runtime_cost: what the process holds besides the plan (an
        ``exla._runtime_cost.RuntimeCost``: the framework's runtime, measured
        once per process), set by the TensorFlow and JAX frontends; None from
        :func:`exla.optimize_hlo` alone.
    """

    limit: int
    floor_bytes: int = 0
    peak_bytes_before: int = 0
    peak_bytes: int = 0
    fits: bool = False
    chosen: Candidate | None = None
    candidates: list[Candidate] = dataclasses.field(default_factory=list)
    xla_compiles: int = 0
    xla_seconds: float = 0.0
    exla_seconds: float = 0.0
    unsplit: list[str] = dataclasses.field(default_factory=list)
    split: list[str] = dataclasses.field(default_factory=list)
    split_loops: list[SplitLoop] = dataclasses.field(default_factory=list)
    program_flops: int = 0
    predicted_seconds_before: float = 0.0
    runtime_cost: Any = None

    def summary(self) -> list[str]:
        """Lines for a report."""
        verdict = "meets" if self.fits else "DOES NOT meet"
        lines = [f"memory limit {format_size(self.limit)}: planned peak "
                 f"{format_size(self.peak_bytes_before)} -> {format_size(self.peak_bytes)} "
                 f"({verdict} the limit; arguments + outputs {format_size(self.floor_bytes)})"]
        if self.runtime_cost is not None:
            lines.append(f"  {self.runtime_cost.summary()}")
        if self.chosen is not None:
            lines.append(f"  plan chosen: {self.chosen}")
            lines.append(f"  predicted time: {format_seconds(self.predicted_seconds_before)} -> "
                         f"{format_seconds(self.chosen.predicted_seconds)} (exla's cost model)")
        if self.split:
            lines.append(f"  split into loops: {'; '.join(self.split)}")
        if self.chosen is not None and self.chosen.recomputed_flops:
            share = (f" ({100 * self.chosen.recomputed_flops / self.program_flops:.1f}% of the "
                     f"program's {format_flops(self.program_flops)})" if self.program_flops else "")
            lines.append(f"  extra work: {format_flops(self.chosen.recomputed_flops)} "
                         f"recomputed{share}")
        if self.unsplit:
            lines.append("  left above the threshold:")
            lines.extend(f"    {line}" for line in self.unsplit)
        lines.append(f"  {len(self.candidates)} candidate(s), {self.xla_compiles} XLA "
                     f"compilation(s) in {self.xla_seconds:.2f} s, exla passes "
                     f"{self.exla_seconds * 1e3:.1f} ms")
        lines.extend(f"    tried: {c}" for c in self.candidates)
        return lines


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def planned_memory_cached(text: str, plan: LimitPlan | None = None):
    """:func:`exla.bridge.xla.planned_memory` with a cache; counts compiles in ``plan``."""
    from exla.bridge import xla as bridge

    key = _key(text)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    start = time.perf_counter()
    stats = bridge.planned_memory(text)
    if plan is not None:
        plan.xla_compiles += 1
        plan.xla_seconds += time.perf_counter() - start
    with _cache_lock:
        _cache[key] = stats
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return stats


def format_flops(flops: int) -> str:
    """``1234567`` -> ``"1.23 MFLOP"``."""
    value, unit = float(flops), 0
    units = ["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"]
    while value >= 1000 and unit < len(units) - 1:
        value, unit = value / 1000, unit + 1
    return f"{flops} FLOP" if unit == 0 else f"{value:.3g} {units[unit]}"


def format_seconds(seconds: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def split_loops(result: SplitterResult) -> list[str]:
    """The splitter's line for each loop it built: ``where shape (size) on dimension ...``."""
    return [loop.description for loop in result.loops]


def unsplit_instructions(result: SplitterResult, text: str, *, above: int = 0) -> list[str]:
    """The instructions the splitter left whole, one line each, larger than ``above`` bytes.

    Each line names the instruction, its opcode and size (read by the C++
    parser from ``text``, the rewritten module), its shape and the
    splitter's reason. Only what the splitter itself reports counts:
    program inputs and the loop state that carries them are buffers that
    exist anyway, not tensors exla failed to split. The largest come first:
    near the floor the search's threshold is small, and the user needs the
    tensors that keep the peak up, not the kilobyte ones listed beside them.
    """
    from exla import _core

    sizes = {f"{computation}/{name}": (opcode, size)
             for computation, name, opcode, size, _ in _core.tensor_sizes(text)}
    found = []
    for tensor in result.unsplit:
        if tensor.where not in sizes:
            continue  # removed by a later pass: it no longer exists
        opcode, size = sizes[tensor.where]
        if size > above:
            found.append((size, f"{tensor.where} ({opcode}) {tensor.shape} {tensor.size}: "
                                f"{tensor.reason}"))
    found.sort(key=lambda pair: -pair[0])  # stable: equal sizes keep the splitter's order
    return [line for _, line in found]


def _slice_bytes(candidate: Candidate) -> int:
    """The split size a candidate's loops work with (the splitter's default when unset)."""
    if candidate.split_size:
        return candidate.split_size
    return (candidate.threshold or 0) // 4


def _arrays(text: str) -> list[tuple[str, str, str, int]]:
    """``(name, opcode, shape, bytes)`` of the array-shaped instructions of a module."""
    from exla import _core

    return [(name, opcode, shape, size)
            for _, name, opcode, size, shape in _core.tensor_sizes(text)]


Optimize = Callable[[int | None, int | None, bool], tuple[str, list]]
"""``optimize(threshold, split_size, large_sums) -> (text, records)``: the C++ pipeline."""


def search(text: str, limit: int, optimize: Optimize,
           *, threshold: int | None = None, split_size: int | None = None,
           ) -> tuple[str, list, LimitPlan]:
    """Finds the cheapest ``(threshold, split_size)`` whose rewritten module fits ``limit``.

    Args:
      text: the input module.
      limit: the limit in bytes on XLA's planned peak.
      optimize: runs the pipeline for one candidate.
      threshold: the user's per-tensor threshold: candidates never exceed it.
      split_size: the user's split size: kept fixed.

    Returns:
      ``(text, records, plan)`` of the chosen candidate (the one with the
      smallest peak when none fits).

    Raises:
      exla.MemoryLimitError: ``limit`` is below the program's arguments plus outputs.
    """
    return _LimitSearch(text, limit, optimize, threshold, split_size).run()


CLEAR_GAIN = 1.5
"""How much faster the cost model must predict a plan than the structural
order's choice to overrule it (see the module's docstring)."""


def _cost(candidate: Candidate) -> tuple:
    """The structural order of fitting plans: the least repeated work, then
    the fewest loops, then the largest slices (fewer iterations, larger matrix
    products), then the largest threshold; the shortest predicted time breaks
    what is left of a tie."""
    return (candidate.recomputed_flops, candidate.loops, -_slice_bytes(candidate),
            -(candidate.threshold or 2**63), candidate.predicted_seconds)


def _best(fitting: list[Candidate]) -> Candidate:
    """The plan to run: the structural order's first, unless the cost model
    predicts another to be CLEAR_GAIN times faster (then the fastest predicted)."""
    first = min(fitting, key=_cost)
    fastest = min(fitting, key=lambda c: (c.predicted_seconds, _cost(c)))
    return fastest if first.predicted_seconds > CLEAR_GAIN * fastest.predicted_seconds else first


def _predicted_seconds(text: str) -> float:
    """The cost model's time for a module (microseconds to compute, no compile)."""
    from exla.predict import predict_time

    return predict_time(text)


class _LimitSearch:
    """One run of :func:`search`: the candidates measured so far and the plan."""

    def __init__(self, text: str, limit: int, optimize: Optimize, threshold: int | None,
                 split_size: int | None) -> None:
        self.text, self.limit, self.optimize = text, limit, optimize
        self.threshold, self.split_size = threshold, split_size
        self.plan = LimitPlan(limit=limit)
        self.results: dict[tuple, tuple[str, list, Candidate]] = {}
        # A threshold at or above the largest tensor splits nothing: start below it.
        self.largest = max((size for *_, size in _arrays(text)), default=0)

    def run(self) -> tuple[str, list, LimitPlan]:
        self._check_floor()
        first = self.measure(self.threshold)  # the user's own settings (none: clean-ups only)
        if not first.fits:
            self.halve(large=False)
            if self.threshold is None and not self._fitting():
                # (A threshold the user gave bounds every tensor: no large
                # sums.) Large sums change nothing where every sum is below
                # the threshold: start below the best plan so far.
                best = min(self.results.values(), key=lambda r: r[2].peak_bytes)[2]
                self.halve(large=True, start=best.threshold // 2 if best.threshold else None)
        if self.split_size is None:
            self.try_larger_slices()
        return self.choose()

    def _check_floor(self) -> None:
        plan = self.plan
        before = planned_memory_cached(self.text, plan)
        plan.peak_bytes_before = before.total_bytes
        plan.predicted_seconds_before = _predicted_seconds(self.text)
        plan.floor_bytes = before.argument_bytes + before.output_bytes - before.alias_bytes
        if self.limit < plan.floor_bytes:
            raise MemoryLimitError(
                f"memory limit {format_size(self.limit)} ({self.limit} bytes) is below the "
                f"program's own arguments and outputs, {format_size(plan.floor_bytes)} "
                f"({plan.floor_bytes} bytes): no rewrite can fit it")

    def _fitting(self) -> list[Candidate]:
        return [r[2] for r in self.results.values() if r[2].fits]

    def measure(self, t: int | None, split: int | None = None,
                large: bool = False) -> Candidate:
        """The candidate with threshold ``t`` (split size: the user's unless given;
        other sizes are only tried when the user gave none)."""
        split = self.split_size if split is None else split
        key = (t, split, large)
        if key not in self.results:
            plan = self.plan
            start = time.perf_counter()
            out, records = self.optimize(t, split, large)
            plan.exla_seconds += time.perf_counter() - start
            peak = planned_memory_cached(out, plan).total_bytes
            splitter = of_records(records)
            plan.program_flops = max(plan.program_flops, splitter.program_flops)
            candidate = Candidate(t, split, peak, len(splitter.loops), peak <= self.limit,
                                  splitter.recomputed_flops, large, _predicted_seconds(out))
            plan.candidates.append(candidate)
            self.results[key] = (out, records, candidate)
            _log.debug("exla: memory limit %s: %s", format_size(self.limit), candidate)
        return self.results[key][2]

    def halve(self, large: bool, start: int | None = None) -> None:
        """From ``start`` (by default the room the limit leaves) down, halving
        until a candidate fits or the peak stops falling; then bisect
        towards larger chunks."""
        room = self.limit - self.plan.floor_bytes
        t = room if self.threshold is None else min(self.threshold, room)
        t = max(min(t, self.largest - 1, start or t), _MIN_THRESHOLD)
        too_big: int | None = None
        best_peak = min(r[2].peak_bytes for r in self.results.values())
        stalls = 0
        while t >= _MIN_THRESHOLD and self.plan.xla_compiles < MAX_CANDIDATES:
            candidate = self.measure(t, large=large)
            if candidate.fits:
                break
            too_big = t
            # The peak may plateau (a tensor that cannot be split) and then
            # fall again; give up only after two halvings without progress.
            stalls = stalls + 1 if candidate.peak_bytes >= best_peak else 0
            best_peak = min(best_peak, candidate.peak_bytes)
            if stalls >= 3:
                return
            t //= 2
        else:
            return
        if too_big is not None:
            self.bisect(t, too_big, large)

    def bisect(self, low: int, high: int, large: bool) -> None:
        """Upwards from a threshold that fits (``low``) for larger chunks: fewer iterations."""
        for _ in range(2):
            if (self.plan.xla_compiles >= MAX_CANDIDATES
                    or high - low < max(_MIN_THRESHOLD, low // 8)):
                break
            middle = (low + high) // 2
            if self.measure(middle, large=large).fits:
                low = middle
            else:
                high = middle

    def try_larger_slices(self) -> None:
        """The splitter's slices default to a quarter of the threshold, which
        leaves room for the few slices a loop body keeps alive at once; where
        the limit leaves more, larger slices mean fewer iterations."""
        fitting = self._fitting()
        if not fitting:
            return
        best = _best(fitting)
        if best.threshold is None:
            return
        for split in (best.threshold // 2, best.threshold):
            if (self.plan.xla_compiles >= MAX_CANDIDATES
                    or not self.measure(best.threshold, split, best.large_sums).fits):
                break

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
        plan.split = split_loops(splitter)
        plan.split_loops = list(splitter.loops)
        return out, records, plan


_LISTED = 12  # instructions a warning names; the report has them all


def format_listing(lines: list[str]) -> str:
    """The first few of ``lines``, one per line, and how many more there are."""
    shown = "".join(f"\n  {line}" for line in lines[:_LISTED])
    more = len(lines) - _LISTED
    return shown + (f"\n  ... and {more} more (see the report's notes)" if more > 0 else "")


def over_limit_message(plan: LimitPlan) -> str:
    """The warning (or strict error) for a limit no candidate meets."""
    # One line per instruction: each line lists its dimensions' reasons with "; ".
    names = format_listing(plan.unsplit) if plan.unsplit else (
        "the splitter left no tensor above the threshold; the peak comes from many tensors "
        "live at once")
    return (f"exla cannot fit the program in memory limit {format_size(plan.limit)}: the "
            f"smallest planned peak reached is {format_size(plan.peak_bytes)} "
            f"({plan.peak_bytes} bytes; {len(plan.candidates)} plans tried; the program's own "
            f"arguments and outputs are {format_size(plan.floor_bytes)}). Instructions "
            f"kept above the threshold, largest first: {names}")
