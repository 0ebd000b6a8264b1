"""Deterministic mutations of HLO text, for comparing verifiers' verdicts.

`mutants(text)` gives a bounded list of `(kind, mutated text)`, each one
small edit of the module: a dropped operand, an instruction renamed onto its
neighbour's name, a changed dimension or element type, a changed opcode, an
undefined operand, a constant whose literal is a name, a parameter number out of range, an unknown attribute, a
dropped ROOT keyword, the text cut in half. Most make the module invalid; some
leave it valid (an opcode of the same arity and type, a missing ROOT when the
root is last). Which instruction is edited depends only on the text.
"""

from __future__ import annotations

import dataclasses
import re

_NAME = r"%?[\w.\-]+"
_HEAD = re.compile(rf"^(\s*)(ROOT\s+)?({_NAME}) = ")
_ARRAY_SHAPE = re.compile(r"^(pred|[sufc]\d+|bf16|f8\w*)\[([\d,]*)\]")

# Opcodes taking two array operands of one shape, giving that shape.
_BINARY = {"add", "subtract", "multiply", "divide", "maximum", "minimum",
           "power", "remainder", "atan2", "and", "or", "xor"}
_FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]


@dataclasses.dataclass
class _Instruction:
    line: int  # index into the text's lines
    indent: str
    root: str  # "ROOT " or ""
    name: str
    shape: str
    opcode: str
    operands: list  # operand strings as printed
    rest: str  # after the closing parenthesis (attributes)
    computation: int  # index of the computation in print order


def _balanced(s: str, start: int) -> int:
    """Index just past the parenthesis group opening at s[start] ('(')."""
    depth, i = 0, start
    quoted = False
    while i < len(s):
        c = s[i]
        if c == '"' and s[i - 1] != "\\":
            quoted = not quoted
        elif not quoted:
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
                if depth == 0:
                    return i + 1
        i += 1
    return -1


def _split_operands(s: str) -> list:
    parts, depth, current = [], 0, ""
    for c in s:
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
    if current.strip():
        parts.append(current.strip())
    return parts


def instructions(text: str) -> list:
    """Every instruction line of `text` that reads as one, in print order."""
    found = []
    computation = -1
    for index, line in enumerate(text.split("\n")):
        if line.rstrip().endswith("{") and " = " not in line.split("{")[0]:
            computation += 1
            continue
        head = _HEAD.match(line)
        if head is None:
            continue
        i = head.end()
        if i < len(line) and line[i] == "(":
            end = _balanced(line, i)
        else:
            end = line.find(" ", i)
        if end < 0:
            continue
        shape = line[i:end]
        rest = line[end:]
        op = re.match(r"^ ([\w\-]+)\(", rest)
        if op is None:
            continue
        open_at = end + op.end() - 1
        close = _balanced(line, open_at)
        if close < 0:
            continue
        found.append(_Instruction(
            line=index, indent=head.group(1), root=head.group(2) or "",
            name=head.group(3), shape=shape, opcode=op.group(1),
            operands=_split_operands(line[open_at + 1:close - 1]),
            rest=line[close:], computation=computation))
    return found


def _render(ins: _Instruction) -> str:
    return (f"{ins.indent}{ins.root}{ins.name} = {ins.shape} {ins.opcode}("
            f"{', '.join(ins.operands)}){ins.rest}")


def _replace_line(text: str, ins: _Instruction, new_line: str) -> str:
    lines = text.split("\n")
    lines[ins.line] = new_line
    return "\n".join(lines)


def _pick(candidates: list):
    """The candidate in the middle: deterministic, away from the edges."""
    return candidates[len(candidates) // 2] if candidates else None


def _operand_name(operand: str) -> str:
    return operand.split()[-1]  # long form: "f32[4]{0} %x"


def mutants(text: str) -> list:
    """[(kind, mutated text)] for `text`; at most one mutant per kind."""
    all_ins = instructions(text)
    out = []

    def add(kind, new_text):
        if new_text != text:
            out.append((kind, new_text))

    ins = _pick([i for i in all_ins if len(i.operands) >= 2
                 and i.opcode not in ("custom-call",)])
    if ins:
        dropped = dataclasses.replace(ins, operands=ins.operands[:-1])
        add("drop-operand", _replace_line(text, ins, _render(dropped)))

    pairs = [(a, b) for a, b in zip(all_ins, all_ins[1:])
             if a.computation == b.computation and not b.root]
    if pairs:
        a, b = _pick(pairs)
        add("rename-collide", _replace_line(
            text, b, _render(dataclasses.replace(b, name=a.name))))

    arrays = [i for i in all_ins if _ARRAY_SHAPE.match(i.shape)
              and _ARRAY_SHAPE.match(i.shape).group(2)
              and i.opcode not in ("parameter", "constant", "custom-call")]
    ins = _pick(arrays)
    if ins:
        m = _ARRAY_SHAPE.match(ins.shape)
        dims = [int(d) for d in m.group(2).split(",")]
        dims[0] += 1
        shape = f"{m.group(1)}[{','.join(map(str, dims))}]" + ins.shape[m.end():]
        add("change-dimension", _replace_line(
            text, ins, _render(dataclasses.replace(ins, shape=shape))))

    ins = _pick([i for i in arrays if i.opcode not in ("convert", "bitcast-convert",
                                                       "reduce-precision")])
    if ins:
        m = _ARRAY_SHAPE.match(ins.shape)
        new_type = "s32" if m.group(1) != "s32" else "f32"
        shape = new_type + ins.shape[len(m.group(1)):]
        add("change-element-type", _replace_line(
            text, ins, _render(dataclasses.replace(ins, shape=shape))))

    binary = [i for i in all_ins if i.opcode in _BINARY]
    ins = _pick(binary)
    if ins:
        add("binary-to-unary-opcode", _replace_line(
            text, ins, _render(dataclasses.replace(ins, opcode="negate"))))
    ins = _pick([i for i in binary if i.opcode in _FLOAT_BINARY
                 and re.match(r"^(f\d+|bf16)\[", i.shape)])
    if ins:
        other = _FLOAT_BINARY[(_FLOAT_BINARY.index(ins.opcode) + 1) % len(_FLOAT_BINARY)]
        add("same-arity-opcode", _replace_line(
            text, ins, _render(dataclasses.replace(ins, opcode=other))))

    ins = _pick([i for i in all_ins if i.operands and i.opcode not in (
        "custom-call", "constant", "parameter")])
    if ins:
        operands = list(ins.operands)
        name = _operand_name(operands[0])
        operands[0] = operands[0][:len(operands[0]) - len(name)] + (
            "%undefined.operand" if name.startswith("%") else "undefined.operand")
        add("undefined-operand", _replace_line(
            text, ins, _render(dataclasses.replace(ins, operands=operands))))

    ins = _pick([i for i in all_ins if i.opcode == "constant"])
    if ins:
        add("garbage-literal", _replace_line(
            text, ins, _render(dataclasses.replace(ins, operands=["not.a.value"]))))

    params = [i for i in all_ins if i.opcode == "parameter"]
    if params:
        ins = params[-1]
        count = sum(1 for p in params if p.computation == ins.computation)
        add("parameter-number-out-of-range", _replace_line(
            text, ins, _render(dataclasses.replace(ins, operands=[str(count + 3)]))))

    ins = _pick([i for i in all_ins if i.opcode in _BINARY])
    if ins:
        add("unknown-attribute", _replace_line(
            text, ins, _render(ins) + ", no_such_attribute={1,2}"))

    roots = [i for i in all_ins if i.root]
    if roots:
        ins = roots[len(roots) // 2]
        add("drop-root", _replace_line(
            text, ins, _render(dataclasses.replace(ins, root=""))))

    add("truncate", text[:len(text) // 2])
    return out
