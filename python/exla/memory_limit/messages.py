"""What the memory-limit search tells the user: the loops of a plan, the
tensors it leaves above the threshold, and the warning when no plan fits.

Every line is printed from the splitter's records (data), never parsed from
its notes.
"""

from __future__ import annotations

from exla import _core
from exla._splitter_result import SplitterResult
from exla._values import format_size
from exla.memory_limit.limit_plan import LimitPlan

__all__ = ["split_loops", "unsplit_instructions", "format_listing", "over_limit_message"]


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
    sizes = {f"{t.computation}/{t.instruction}": (t.opcode, t.bytes)
             for t in _core.tensor_sizes(text)}
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
            f"({plan.peak_bytes} bytes; {len(plan.candidates)} plans compiled, "
            f"{plan.model_plans} judged by exla's models; the program's own "
            f"arguments and outputs are {format_size(plan.floor_bytes)}). Instructions "
            f"kept above the threshold, largest first: {names}{_below_floor(plan)}")


def _below_floor(plan: LimitPlan) -> str:
    """Where the limit is below the program's floor, that sentence, naming what no rule
    splits (the largest counts in the floor; each is listed with its reason)."""
    found = plan.floor
    if found is None or plan.limit >= found.total_bytes:
        return ""
    named = "".join(f"\n  unsplittable: {u}" for u in found.unsplittable[:_LISTED])
    return (f"\nThe limit is below the program's {found.headline()} ({found.total_bytes} "
            f"bytes): no plan can meet it.{named}")
