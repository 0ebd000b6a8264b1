"""The calling convention of an HLO module's entry computation.

A runtime that is handed a rewritten module needs its result shapes and types
up front (``XlaCallModule`` does), and exla must know which results are new
values of variables (``input_output_alias`` in the module header). The C++
parser reads both (:func:`exla._core.read_signature`); this module turns them
into the types the Python side works with.

>>> sig = read_signature('''HloModule m, input_output_alias={ {2}: (1, {}, may-alias) }
... ENTRY e {
...   a = f32[3]{0} parameter(0)
...   b = f32[3]{0} parameter(1)
...   r = f32[1,3]{1,0} reshape(a)
...   c = f32[] constant(1)
...   ROOT t = (f32[1,3]{1,0}, f32[], f32[3]{0}) tuple(r, c, b)
... }''')
>>> [(r.element_type, r.dims) for r in sig.results]
[('f32', (1, 3)), ('f32', ()), ('f32', (3,))]
>>> len(sig.parameters), sig.result_is_tuple, sig.aliases
(2, True, ((2, 1),))
"""

from __future__ import annotations

import dataclasses
from typing import Any

from exla import _core

__all__ = ["ArrayShape", "HloSignature", "read_signature"]


@dataclasses.dataclass(frozen=True)
class ArrayShape:
    """An array of an entry signature: XLA element type and dimensions."""

    element_type: str  # XLA's name: "f32", "s32", "pred", ("token" for a token result)
    dims: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class HloSignature:
    """The entry computation's signature.

    Attributes:
      parameters: one shape per entry parameter, by parameter number.
      results: the leaves of the result shape, in order (a tuple result is
        flattened, as ``XlaCallModule`` returns one tensor per leaf).
      result_is_tuple: whether the entry computation returns a tuple.
      aliases: ``(result index, parameter number)`` for every result written in
        place of a whole parameter (``input_output_alias``).
    """

    parameters: tuple[ArrayShape, ...]
    results: tuple[ArrayShape, ...]
    result_is_tuple: bool
    aliases: tuple[tuple[int, int], ...]


def _array(array: Any, what: str) -> ArrayShape:
    """``array``: the C++ parser's ``SignatureArray``."""
    if array.is_dynamic:
        raise NotImplementedError(f"{what} has a dynamic dimension, which exla does not support")
    return ArrayShape(array.element_type, array.dims)


def read_signature(text: str) -> HloSignature:
    """The entry signature of the HLO module ``text``.

    Raises:
      ValueError: malformed HLO (with line and column).
      NotImplementedError: a tuple-shaped or token parameter, a dynamic
        dimension, or an alias into part of a tuple.
    """
    raw = _core.read_signature(text)
    parameters = []
    for number, parameter in enumerate(raw.parameters):
        if not parameter.is_array:
            kind = "tuple-shaped" if parameter.element_type == "tuple" else "token"
            raise NotImplementedError(f"{kind} entry parameters are not supported "
                                      f"(parameter {number})")
        parameters.append(_array(parameter, f"entry parameter {number}"))
    results = tuple(_array(leaf, f"entry result {i}") for i, leaf in enumerate(raw.outputs))
    is_tuple = raw.output_is_tuple
    aliases = []
    for alias in raw.aliases:
        if alias.parameter_index or len(alias.output_index) != (1 if is_tuple else 0):
            raise NotImplementedError(
                f"input_output_alias {alias.output_index}: ({alias.parameter}, "
                f"{alias.parameter_index}) aliases part of a tuple; exla supports results that "
                "replace whole parameters")
        aliases.append((alias.output_index[0] if is_tuple else 0, alias.parameter))
    return HloSignature(tuple(parameters), results, is_tuple, tuple(aliases))
