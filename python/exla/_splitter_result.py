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
>>> optimized = _core.optimize(hlo.strip(), Options(threshold="1MB", passes=["tensor-splitter"]))
>>> (loop,) = of_records(optimized.passes).loops
>>> loop.where, loop.extents, loop.dimension, loop.chunks * loop.chunk + loop.remainder
('kmv/k', (1000, 1000), 0, 1000)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable

from exla import _core

if TYPE_CHECKING:
    from exla._exla import SplitLoop, UnsplitTensor

__all__ = ["SplitLoop", "UnsplitTensor", "SplitterResult", "of_records"]

# SplitLoop (a loop the splitter built over a dimension of one tensor) and
# UnsplitTensor (an instruction above the threshold it left whole, and why)
# are the C++ records themselves, read-only (cc/pass/pass_record.h, bound in
# cc/bindings/records.cc). Each has ``where`` (``computation/instruction``);
# a loop's ``description`` and a tensor's ``size`` are the splitter's own
# wording, printed in C++ from the fields, for people: code reads the fields.
__getattr__ = _core.records("SplitLoop", "UnsplitTensor")


@dataclasses.dataclass(frozen=True)
class SplitterResult:
    """Everything the splitter recorded over one pipeline run."""

    loops: tuple[SplitLoop, ...] = ()
    unsplit: tuple[UnsplitTensor, ...] = ()
    recomputed_flops: int = 0
    program_flops: int = 0


def of_records(records: Iterable[Any]) -> SplitterResult:
    """The splitter's results in the ``PassRecord`` records of one ``_core.optimize`` call."""
    records = list(records)
    return SplitterResult(tuple(loop for r in records for loop in r.loops),
                          tuple(tensor for r in records for tensor in r.unsplit),
                          sum(r.recomputed_flops for r in records),
                          max((r.program_flops for r in records), default=0))
