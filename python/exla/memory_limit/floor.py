"""The program's floor under a memory limit: what no plan can go below, by name.

Whatever exla rewrites, XLA must hold the program's arguments and its outputs
(those not written in place of an argument), and, at some moment beside them,
each instruction no rule of the splitter can slice. A :class:`Floor` states
these as data: the argument and output bytes from XLA's own buffer
assignment, and the instructions the splitter refused (in the plan chosen,
and run once at a small threshold), each with its size and reason. A report prints it beside the
plan's peak, so that a user sees how far from the floor the plan is; a limit
below it is refused by name.

The unsplittable instructions need not be live at once, so the floor counts
the largest of them only: a lower bound on XLA's planned peak, not a guess of
it (as the splitter sees the program: an elementwise instruction XLA fuses
into its consumer holds no buffer of its own, which the tests check against
XLA's buffer assignment on sorts).

>>> floor = Floor(4_000_032, 4_000_000, (Unsplittable("main/e", "exponential",
...     "f32[1000,1000]", 4_000_000, "s (sort) cannot consume slices"),))
>>> floor.total_bytes
12000032
>>> floor.headline()
'floor 12 MB (arguments 4 MB + outputs 4 MB + unsplittable 4 MB: main/e 4 MB)'
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from exla._values import format_size

__all__ = ["Unsplittable", "Floor", "of_stats", "unsplittable_of"]


@dataclasses.dataclass(frozen=True)
class Unsplittable:
    """An instruction the splitter refused to slice, which XLA holds whole.

    Attributes:
      where: ``"computation/instruction"``.
      opcode: its opcode.
      shape: its shape as XLA prints it.
      bytes: what it holds (one device's share of a sharded value).
      reason: the splitter's reason, for each dimension it tried.
    """

    where: str
    opcode: str
    shape: str
    bytes: int
    reason: str

    def __str__(self) -> str:
        return (f"{self.where} ({self.opcode}) {self.shape} {format_size(self.bytes)}: "
                f"{self.reason}")


@dataclasses.dataclass(frozen=True)
class Floor:
    """What no plan can go below (see the module doc).

    Attributes:
      argument_bytes: the entry's parameters, by XLA's buffer assignment.
      output_bytes: the outputs not aliased to a parameter, by the same.
      unsplittable: the instructions the splitter left whole that are
        neither arguments nor outputs, the largest first.
    """

    argument_bytes: int
    output_bytes: int
    unsplittable: tuple[Unsplittable, ...] = ()

    @property
    def unsplittable_bytes(self) -> int:
        """The largest unsplittable instruction: they need not be live at once."""
        return max((u.bytes for u in self.unsplittable), default=0)

    @property
    def total_bytes(self) -> int:
        """Arguments, outputs and the largest unsplittable instruction."""
        return self.argument_bytes + self.output_bytes + self.unsplittable_bytes

    def headline(self, shown: int = 3) -> str:
        """``floor F (arguments A + outputs O + unsplittable U: name B, ...)``,
        naming the ``shown`` largest unsplittable instructions."""
        parts = (f"arguments {format_size(self.argument_bytes)} + outputs "
                 f"{format_size(self.output_bytes)}")
        if self.unsplittable:
            names = ", ".join(f"{u.where} {format_size(u.bytes)}"
                              for u in self.unsplittable[:shown])
            more = len(self.unsplittable) - shown
            names += f" and {more} more" if more > 0 else ""
            parts += f" + unsplittable {format_size(self.unsplittable_bytes)}: {names}"
        return f"floor {format_size(self.total_bytes)} ({parts})"

    def against(self, peak_bytes: int) -> str:
        """``plan peak P = 1.30x floor``."""
        ratio = f"{peak_bytes / self.total_bytes:.2f}x" if self.total_bytes else "n/a"
        return f"plan peak {format_size(peak_bytes)} = {ratio} floor"


def of_stats(stats: Any, unsplittable: Iterable[Unsplittable] = ()) -> Floor:
    """The floor from XLA's figures (an ``exla.bridge.xla.MemoryStats`` of the
    program or of any rewrite of it: they share its arguments and outputs) and
    the splitter's refusals (an instruction named twice counts once)."""
    named = {}
    for refusal in unsplittable:
        named.setdefault(refusal.where, refusal)
    return Floor(stats.argument_bytes, stats.output_bytes - stats.alias_bytes,
                 tuple(sorted(named.values(), key=lambda u: -u.bytes)))


def unsplittable_of(unsplit: Iterable[Any], sizes: Iterable[Any]) -> list[Unsplittable]:
    """The splitter's refusals (``UnsplitTensor`` records) that hold a temporary.

    ``sizes`` are the C++ parser's ``TensorSize`` records of the module the
    records describe: a refusal whose instruction a later pass removed holds
    nothing, and one that is an output is counted with the outputs.
    """
    known = {f"{s.computation}/{s.instruction}": s for s in sizes}
    found = []
    for tensor in unsplit:
        size = known.get(tensor.where)
        if size is not None and not size.output:
            found.append(Unsplittable(tensor.where, size.opcode, tensor.shape, size.bytes,
                                      tensor.reason))
    return found
