"""What the memory-limit search found, as data: the plans it judged and the one it chose.

:mod:`exla.memory_limit.search` fills a :class:`LimitPlan` with a :class:`Candidate`
for each plan it measured or judged; reports (:mod:`exla.report`) print its
:meth:`LimitPlan.summary`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from exla.memory_limit.floor import Floor
from exla.memory_limit.model_plans import KEEP_WHOLE, TWO_PASS
from exla._values import format_flops, format_seconds, format_size

if TYPE_CHECKING:
    from exla._exla import SplitLoop

__all__ = ["Candidate", "LimitPlan"]

# Instructions left above the threshold that a report shows when the plan fits
# (the largest first); every one is shown when the limit is missed.
_UNSPLIT_SHOWN = 5


def _choice_text(tensor: str, dimension: int) -> str:
    """A plan's structural choice for one tensor, for people."""
    if dimension == KEEP_WHOLE:
        return f", {tensor} kept whole"
    if dimension == TWO_PASS:
        return f", {tensor} in a second pass"
    return f", {tensor} along dimension {dimension}"


@dataclasses.dataclass
class Candidate:
    """One plan the search measured.

    Not the C++ search's ``PlanCandidate`` (cc/search/plan_search.h) in
    another form: a Candidate is a row of the search's report, one for every
    plan whichever judge saw it, and holds what only the Python side
    measures: XLA's compile of the plan in ``peak_bytes`` beside the model's
    ``predicted_peak_bytes`` (in :attr:`LimitPlan.model_candidates`, the
    model's alone). The models' plans become Candidates to be ranked in the
    same order as measured ones (``_as_candidate`` in
    :mod:`exla.memory_limit.search`).

    Attributes:
      threshold: the per-tensor threshold given to the passes (None: none).
      split_size: the split size given to the passes (None: the splitter's);
        above the threshold only with ``tile_size`` (the outer loops' chunk).
      peak_bytes: XLA's planned peak (temporaries + arguments + outputs -
        aliased) of the rewritten module.
      loops: ``while`` loops the splitter built (nested ones included).
      fits: whether ``peak_bytes`` is at most the limit.
      recomputed_flops: work the loops repeat (producers computed again
        because they stay for other users), from the splitter's records.
      large_sums: the splitter may accumulate sums above the threshold.
      predicted_seconds: the cost model's time for the rewritten module.
      predicted_peak_bytes: the memory model's peak for it, where the plan
        came from the model-guided search (None: measured blind).
      dimensions: ``(("computation/instruction", dimension), ...)``: loops
        the plan moved off the splitter's first dimension, values it keeps
        whole instead of recomputing (dimension ``KEEP_WHOLE``), and
        softmax-weighted sums it leaves to a second pass (``TWO_PASS``).
      tile_size: the tiles its loop bodies are split into again, running
        state written in place (cc/passes/tensor_splitter/TILING.md; None:
        none).
    """

    threshold: int | None
    split_size: int | None
    peak_bytes: int
    loops: int
    fits: bool
    recomputed_flops: int = 0
    large_sums: bool = False
    predicted_seconds: float = 0.0
    predicted_peak_bytes: int | None = None
    dimensions: tuple[tuple[str, int], ...] = ()
    tile_size: int | None = None

    def __str__(self) -> str:
        split = format_size(self.split_size) if self.split_size else "auto"
        split += ", sums above the threshold" if self.large_sums else ""
        split += "".join(_choice_text(tensor, d) for tensor, d in self.dimensions)
        split += f", tiles of {format_size(self.tile_size)}" if self.tile_size else ""
        verdict = "fits" if self.fits else "over"
        model = ("" if self.predicted_peak_bytes is None else
                 f" (model {format_size(self.predicted_peak_bytes)})")
        return (f"threshold {format_size(self.threshold)}, split {split}: peak "
                f"{format_size(self.peak_bytes)}{model}, {self.loops} loop(s), "
                f"{format_flops(self.recomputed_flops)} recomputed, predicted "
                f"{format_seconds(self.predicted_seconds)}, {verdict}")


@dataclasses.dataclass
class LimitPlan:
    """What the search under a memory limit found.

    The Python search's own record, not a C++ one: XLA's compiles (their
    count, time and planned peaks), the framework's runtime cost and the
    backend are measured here, where the C++ plan search never sees them.

    Attributes:
      limit: the limit in bytes.
      floor_bytes: the program's own arguments plus outputs (not aliased),
        known before any plan is built (the room the search divides).
      floor: the program's floor after the search (a
        :class:`~exla.memory_limit.floor.Floor`: arguments and outputs by
        XLA's buffer assignment, and the instructions the splitter left
        whole, by name, in the plan chosen and at a small threshold); None
        before it.
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
        ``exla.memory_limit.runtime_memory.RuntimeCost``: the framework's runtime, measured
        once per process), set by the TensorFlow and JAX frontends; None from
        :func:`exla.optimize_hlo` alone.
      before_predicted: ``peak_bytes_before`` is the memory model's figure
        (the input was not compiled: the plan search needed no XLA figure
        of it).
      model_candidates: every plan the C++ search judged by exla's models,
        in order (``peak_bytes`` the memory model's, nothing compiled).
      model_seconds: time in that search (its pipeline runs included).
      residue: what the search (its XLA compilations) left resident in the
        process after returning its free memory (an
        ``exla.memory_limit.runtime_memory.SearchResidue``); None where not
        measured.
      platform: the backend whose XLA compile gave ``peak_bytes`` (and every
        candidate's): the one that runs the program. exla's memory and cost
        models mirror XLA CPU, so on another backend their figures only rank
        plans.
    """

    limit: int
    floor_bytes: int = 0
    floor: Floor | None = None
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
    before_predicted: bool = False
    model_candidates: list[Candidate] = dataclasses.field(default_factory=list)
    model_seconds: float = 0.0
    platform: str = "cpu"
    residue: Any = None

    @property
    def model_plans(self) -> int:
        """Plans the C++ search judged by exla's models."""
        return len(self.model_candidates)

    def summary(self) -> list[str]:
        """Lines for a report."""
        verdict = "meets" if self.fits else "DOES NOT meet"
        before = format_size(self.peak_bytes_before)
        before += " (exla's model; not compiled)" if self.before_predicted else ""
        lines = [f"memory limit {format_size(self.limit)}: planned peak "
                 f"{before} -> {format_size(self.peak_bytes)} ({verdict} the limit)"]
        lines.extend(self._floor_lines())
        if self.platform != "cpu":
            lines.append(f"  planned peaks are XLA's {self.platform} compile's; exla's memory "
                         f"and cost models (which mirror XLA CPU) only ranked the plans")
        if self.runtime_cost is not None:
            lines.append(f"  {self.runtime_cost.summary()}")
        if self.residue is not None:
            lines.append(f"  {self.residue.summary()}")
        if self.chosen is not None:
            lines.append(f"  plan chosen: {self.chosen}")
            model = "exla's cost model" + ("" if self.platform == "cpu" else " of XLA CPU")
            lines.append(f"  predicted time: {format_seconds(self.predicted_seconds_before)} -> "
                         f"{format_seconds(self.chosen.predicted_seconds)} ({model})")
        if self.split:
            lines.append(f"  split into loops: {'; '.join(self.split)}")
        if self.chosen is not None and self.chosen.recomputed_flops:
            share = (f" ({100 * self.chosen.recomputed_flops / self.program_flops:.1f}% of the "
                     f"program's {format_flops(self.program_flops)})" if self.program_flops else "")
            lines.append(f"  extra work: {format_flops(self.chosen.recomputed_flops)} "
                         f"recomputed{share}")
        lines.extend(self._unsplit_lines())
        if self.model_plans:
            lines.append(f"  {self.model_plans} plan(s) judged by exla's memory and cost models "
                         f"in {self.model_seconds:.2f} s")
        lines.append(f"  {len(self.candidates)} candidate(s), {self.xla_compiles} XLA "
                     f"{self.platform} compilation(s) in {self.xla_seconds:.2f} s, exla passes "
                     f"{self.exla_seconds * 1e3:.1f} ms")
        lines.extend(f"    tried: {c}" for c in self.candidates)
        return lines

    def _floor_lines(self) -> list[str]:
        """The floor beside the plan's peak, and each unsplittable instruction's reason."""
        if self.floor is None:
            return [f"  arguments + outputs {format_size(self.floor_bytes)}"]
        lines = [f"  {self.floor.headline()}, {self.floor.against(self.peak_bytes)}"]
        if self.limit < self.floor.total_bytes and not self.fits:
            # Only where nothing met the limit: the floor is a lower bound from
            # the splitter's refusals, and a plan XLA planned within the limit
            # outranks it.
            lines.append("  the limit is below the floor: no plan can meet it")
        shown = self.floor.unsplittable[:_UNSPLIT_SHOWN]
        return lines + [f"    unsplittable: {u}" for u in shown]

    def _unsplit_lines(self) -> list[str]:
        """What the splitter left above the threshold: every instruction when the limit is
        missed (those are what the user must look at), else the count and the largest few,
        since a plan that fits can leave dozens of small M x M matrices whole."""
        if not self.unsplit:
            return []
        if not self.fits:
            return ["  left above the threshold:"] + [f"    {line}" for line in self.unsplit]
        shown = self.unsplit[:_UNSPLIT_SHOWN]
        more = len(self.unsplit) - len(shown)
        head = (f"  left above the threshold: {len(self.unsplit)} instruction(s), within the "
                f"limit" + (f"; the first {len(shown)} (all in report.limit_plan.unsplit):"
                            if more else ":"))
        return [head] + [f"    {line}" for line in shown]
