"""What the tensor-splitter did, as data read from the C++ core's pass records.

The splitter records each loop it builds and each tensor it leaves above its
threshold with typed fields (cc/api/exla.h: ``SplitLoop``, ``UnsplitTensor``);
its notes for the user are printed from those records. Python reads the
fields, never the notes' wording, so rewording a note cannot change a plan.

>>> import exla
>>> from exla import _core
>>> hlo = '''
... HloModule kmv
... ENTRY kmv {
...   x = f32[1000,8] parameter(0)
...   v = f32[1000,1] parameter(1)
...   k = f32[1000,1000] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
...   e = f32[1000,1000] exponential(k)
...   ROOT kv = f32[1000,1] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
... }'''
>>> from exla.options import Options
>>> _, records = _core.optimize(hlo.strip(), Options(threshold="1MB", passes=["tensor-splitter"]))
>>> (loop,) = of_records(records).loops
>>> loop.where, loop.extents, loop.dimension, loop.chunks * loop.chunk + loop.remainder
('kmv/k', (1000, 1000), 0, 1000)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

__all__ = ["SplitLoop", "UnsplitTensor", "SplitterResult", "of_records"]


@dataclasses.dataclass(frozen=True)
class SplitLoop:
    """A loop the splitter built over a dimension of one tensor.

    ``description`` is the splitter's own line about it (printed in C++ from
    these fields), for people; code reads the fields.
    """

    computation: str
    instruction: str
    shape: str
    bytes: int
    extents: tuple[int, ...]  # the split array's dimensions (of a tuple: its largest array)
    dimension: int
    extent: int  # extents[dimension]
    chunk: int
    chunks: int
    remainder: int
    members: int
    recomputed: tuple[str, ...]
    recomputed_flops: int
    description: str
    # sums weighted by a softmax that this loop of its statistics accumulates
    # in the same pass (cc/passes/tensor_splitter/weighted_sums.h)
    accumulated: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``computation/instruction``."""
        return f"{self.computation}/{self.instruction}"

    @classmethod
    def of_data(cls, data: dict) -> "SplitLoop":
        """A loop from the C++ core's fields (cc/bindings: ``SplitLoopData``)."""
        return cls(**{**data, "extents": tuple(data["extents"]),
                      "recomputed": tuple(data["recomputed"]),
                      "accumulated": tuple(data.get("accumulated", ()))})


@dataclasses.dataclass(frozen=True)
class UnsplitTensor:
    """An instruction above the threshold that the splitter left whole, and why."""

    computation: str
    instruction: str
    shape: str
    bytes: int
    per_device: bool
    reason: str
    size: str  # the size as the splitter states it ("4.0 MB", "1.0 MB per device")

    @property
    def where(self) -> str:
        """``computation/instruction``."""
        return f"{self.computation}/{self.instruction}"


@dataclasses.dataclass(frozen=True)
class SplitterResult:
    """Everything the splitter recorded over one pipeline run."""

    loops: tuple[SplitLoop, ...] = ()
    unsplit: tuple[UnsplitTensor, ...] = ()
    recomputed_flops: int = 0
    program_flops: int = 0


def _data(record: Any) -> dict:
    # (name, changed, seconds, messages, data): see cc/bindings/python_module.cc.
    return record[4] if len(record) > 4 and isinstance(record[4], dict) else {}


def of_records(records: Iterable[Any]) -> SplitterResult:
    """The splitter's results in the pass records of one ``_core.optimize`` call."""
    loops: list[SplitLoop] = []
    unsplit: list[UnsplitTensor] = []
    recomputed = program = 0
    for record in records:
        data = _data(record)
        loops += [SplitLoop.of_data(d) for d in data.get("loops", ())]
        unsplit += [UnsplitTensor(**d) for d in data.get("unsplit", ())]
        recomputed += int(data.get("recomputed_flops", 0))
        program = max(program, int(data.get("program_flops", 0)))
    return SplitterResult(tuple(loops), tuple(unsplit), recomputed, program)
