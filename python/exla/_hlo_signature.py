"""The calling convention of an HLO module, read from its header line.

exla hands the rewritten program back to TensorFlow through ``XlaCallModule``,
which needs the result shapes and types up front, and exla must know which
results are new values of variables (``input_output_alias``). Both facts are in
the first line of the HLO text that XLA prints::

    HloModule m, input_output_alias={ {2}: (1, {}, may-alias) },
        entry_computation_layout={(f32[3]{0}, f32[3]{0})->(f32[1,3]{1,0}, f32[], f32[3]{0})}

The shapes are read by :func:`exla.bridge.tensorflow_call.entry_layout`; this
module adds the aliases.

>>> sig = read_signature(
...     "HloModule m, input_output_alias={ {2}: (1, {}, may-alias) }, "
...     "entry_computation_layout={(f32[3]{0}, f32[3]{0})->(f32[1,3]{1,0}, f32[], f32[3]{0})}\\n")
>>> [(r.element_type, r.dims) for r in sig.results]
[('f32', (1, 3)), ('f32', ()), ('f32', (3,))]
>>> len(sig.parameters), sig.aliases
(2, ((2, 1),))
>>> len(read_signature("HloModule m, entry_computation_layout={(f32[], /*index=1*/s32[2]{0})->f32[]}").parameters)
2
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

__all__ = ["HloSignature", "read_signature", "read_aliases"]

_ALIAS = re.compile(r"\{\s*(\d+)\s*\}\s*:\s*\(\s*(\d+)\s*,\s*\{\s*\}")


@dataclasses.dataclass(frozen=True)
class HloSignature:
    """Entry parameters, entry results (``ArrayShape``) and ``(result index, parameter)`` aliases."""

    parameters: tuple[Any, ...]
    results: tuple[Any, ...]
    aliases: tuple[tuple[int, int], ...]


def read_aliases(text: str) -> tuple[tuple[int, int], ...]:
    """``(result tuple index, parameter number)`` pairs of ``input_output_alias``.

    Only top-level results and whole parameters are read (what TensorFlow emits
    for variables a function writes).

    >>> read_aliases("HloModule m, input_output_alias={ {1}: (2, {}, may-alias), {2}: (0, {}, may-alias) }")
    ((1, 2), (2, 0))
    >>> read_aliases("HloModule m, entry_computation_layout={()->f32[]}")
    ()
    """
    header = text.lstrip().split("\n", 1)[0]
    start = header.find("input_output_alias={")
    if start < 0:
        return ()
    depth, i = 0, start + len("input_output_alias=")
    end = i
    while end < len(header):
        depth += header[end] == "{"
        depth -= header[end] == "}"
        end += 1
        if depth == 0:
            break
    return tuple((int(r), int(p)) for r, p in _ALIAS.findall(header[i:end]))


def read_signature(text: str) -> HloSignature:
    """Read the entry signature of an HLO module from its ``HloModule`` header line.

    Raises:
      ValueError: the header has no ``entry_computation_layout``.
      NotImplementedError: tuple-shaped parameters or dynamic dimensions.
    """
    from exla.bridge.tensorflow_call import entry_layout

    layout = entry_layout(text)
    return HloSignature(layout.parameters, layout.results, read_aliases(text))
