"""The collectives of a partitioned program, read from its HLO text.

XLA's SPMD partitioner turns a sharded program into one program per device
and adds the collectives the devices need (all-gather, all-reduce,
reduce-scatter, all-to-all, collective-permute). Whether exla's loops keep
their slices on each device shows here: in the text of the compiled
executable (``jax.jit(f).lower(*args).compile().as_text()``), a loop over a
dimension cut between devices gathers inside the loop body or gathers the
whole tensor before it.

>>> text = '''HloModule m
...
... body {
...   p = (s32[], f32[8]) parameter(0)
...   x = f32[8] get-tuple-element(p), index=1
...   s = f32[8] all-reduce(x), replica_groups={}, to_apply=add
...   ROOT t = (s32[], f32[8]) tuple(i, s)
... }
...
... ENTRY main {
...   a = f32[4,3] parameter(0)
...   g = f32[32,3]{1,0} all-gather(a), dimensions={0}
...   ROOT w = (s32[], f32[8]) while(t0), condition=cond, body=body
... }'''
>>> [(c.opcode, c.shape, c.bytes, c.in_loop) for c in collectives(text)]
[('all-reduce', 'f32[8]', 32, True), ('all-gather', 'f32[32,3]{1,0}', 384, False)]
>>> combined = '''ENTRY main {
...   r = (f32[], f32[4,8]{1,0}) all-reduce(a, b), to_apply=add
... }'''
>>> [(c.shape, c.bytes) for c in collectives(combined)]
[('(f32[], f32[4,8]{1,0})', 132)]
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Collective", "collectives"]

_OPCODES = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\b[^=]*\{\s*$")
# The result shape is an array or a tuple: XLA's combiners merge several
# all-reduces into one of a tuple ("(f32[], f32[4,8]{1,0}) all-reduce(...)").
_COLLECTIVE = re.compile(r"=\s*(\([^()]*\)|\S+)\s+(" + "|".join(_OPCODES) + r")(?:-start)?\(")
_CALLEE = re.compile(r"\b(body|condition|to_apply|calls)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_ARRAY = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4,
          "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}


class Collective(NamedTuple):
    """One collective of a partitioned program.

    Attributes:
      computation: the computation it is in.
      opcode: ``all-gather``, ``all-reduce``, ...
      shape: its result shape as printed.
      bytes: the bytes of its result (every array of a tuple).
      in_loop: it runs in the body (or condition) of a ``while`` loop, or in a
        computation such a body calls.
    """

    computation: str
    opcode: str
    shape: str
    bytes: int
    in_loop: bool


def _bytes(shape: str) -> int:
    total = 0
    for element_type, dims in _ARRAY.findall(shape):
        size = _BYTES.get(element_type, 0)
        for d in filter(None, dims.split(",")):
            size *= int(d)
        total += size
    return total


def collectives(text: str) -> list[Collective]:
    """Every collective of an HLO module, in print order."""
    bodies: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _COMPUTATION.match(line)
        if match and not line.startswith((" ", "\t")):
            current = match.group(1)
            bodies[current] = []
        elif current is not None:
            bodies[current].append(line)
    callees: dict[str, set[str]] = {name: set() for name in bodies}
    loops: set[str] = set()
    for name, lines in bodies.items():
        for line in lines:
            for key, callee in _CALLEE.findall(line):
                callees[name].add(callee)
                if key in ("body", "condition"):
                    loops.add(callee)
            for branches in _BRANCHES.findall(line):
                callees[name].update(b.strip().lstrip("%") for b in branches.split(","))
    in_loop, stack = set(), list(loops)
    while stack:
        name = stack.pop()
        if name in in_loop or name not in bodies:
            continue
        in_loop.add(name)
        stack.extend(callees[name])
    found = []
    for name, lines in bodies.items():
        for line in lines:
            match = _COLLECTIVE.search(line)
            if match:
                shape = match.group(1)
                found.append(Collective(name, match.group(2), shape, _bytes(shape), name in in_loop))
    return found
