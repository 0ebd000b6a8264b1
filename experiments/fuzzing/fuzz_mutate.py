"""Text-mutation fuzzer: exla's parser and verifier against XLA's on broken HLO.

``python -m experiments fuzz_mutate --n N --seed S [--out DIR] [--results [FILE]]``
(``--recheck DIR``: check the kept findings of a run again, after a fix)

The HLO texts of generated programs (:mod:`experiments.fuzzing.fuzz_programs`, TensorFlow
and JAX, each before and after exla's rewrite, so loops and tuples are in it
too) are mutated deterministically (:func:`mutate`): an operand dropped, an
instruction renamed or given another's name, a dimension or an element type
changed, the file truncated, a line deleted, two lines swapped, an opcode
swapped, an attribute corrupted, a brace or parenthesis added or removed,
garbage characters inserted, a parameter number changed. For every mutant:

* exla (``exla._core.verify``, the parser and verifier every entry point runs
  first) must accept it or raise ``ValueError`` whose message names a line and
  a column; ``ExlaError``, any other exception, or a crash of the process is a
  finding;
* exla's verdict must equal XLA's: jaxlib's parser
  (``hlo_module_from_text``), its HLO -> StableHLO converter and the MLIR
  verifier of the converted module (as ``exla.bridge.xla.verify`` does, but
  without exla's own verifier in front of it), and a module these accept is
  compiled for the CPU too (XLA's HLO verifier runs only there); XLA's parser
  aborting the process counts as XLA rejecting;
* a mutant exla accepts must go through ``optimize_hlo`` at the program's
  forced-splitting threshold, and XLA must accept its output.

Every check runs in child processes in batches (like the differential fuzzer),
so an abort costs one mutant. Findings keep a reproducer in
``<out>/mutants/<id>/`` (the mutant, its base, both messages).
Where exla's verdict differs from XLA's on purpose the case is counted by name
(:data:`INTENDED_STRICTER`, :data:`INTENDED_LAXER`, each with its reason) and
not as a disagreement.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments import REPO_ROOT, RESULTS_DIR
from experiments.fuzzing import fuzz_programs as fp
from experiments.harness import machine

DEFAULT_OUT = Path(tempfile.gettempdir()) / "exla-fuzz-mutate"
RESULTS_FILE = RESULTS_DIR / "fuzz_mutation_summary.json"
MUTANTS_PER_BASE = 12  # mutants of each base text (a program before or after exla)



def _first_error(exla_message: str) -> str:
    """The first of the errors in exla's message (it lists up to five)."""
    return exla_message.split("; line ")[0]


# Where exla and XLA's verdict differ on purpose, by name: (test on exla's and
# XLA's messages, why). A mutant that matches is counted under its name, not
# as a disagreement.
INTENDED_STRICTER: dict[str, tuple[Callable[[str, str], bool], str]] = {
    "declared-shape-of-tuple-gte-while": (
        lambda exla, xla: re.search(r"instruction '[^']*': (tuple|get-tuple-element|while) "
                                    r"has shape .* but its operands give", _first_error(exla))
        is not None,
        "A tuple, get-tuple-element or while whose declared shape differs from the shape of "
        "its operands. XLA's HloVerifier refuses these as well (ShapeVerifier's HandleTuple, "
        "HandleGetTupleElement and HandleWhile compare the declared shape with the inferred "
        "one), but jaxlib exposes no call that runs it on a module: its HLO -> StableHLO "
        "importer builds these three instructions' result types from their operands, so the "
        "mismatch is gone before the MLIR verifier or the CPU compiler sees the module. "
        "exla's passes read the declared shapes, so exla must refuse them."),
    "entry-computation-layout-shapes": (
        lambda exla, xla: re.search(r"entry_computation_layout gives (parameter \d+|the result) "
                                    r"the shape", _first_error(exla)) is not None,
        "The module header's entry_computation_layout gives a parameter or the result "
        "another shape than the ENTRY computation's. XLA's HloVerifier refuses it "
        "(VerifyEntryComputationLayout: the shapes must be compatible), but jaxlib's importer "
        "reads the computation, not the header, and runs no HloVerifier. (A header with "
        "another number of parameters makes XLA's importer abort the process: that XLA "
        "counts as a refusal.)"),
    "module-header": (
        lambda exla, xla: "expected 'HloModule' at the start of the module" in exla,
        "Text without the `HloModule name, ...` line. XLA's parser then reads the text as "
        "bare computations and makes up a module around them; exla wants the header, which "
        "every frontend prints and which carries the entry layout and input/output aliasing "
        "that exla's output must keep."),
}
INTENDED_LAXER: dict[str, tuple[Callable[[str, str], bool], str]] = {
    "unknown-opcode": (
        lambda exla, xla: "Unknown opcode" in xla,
        "exla carries instructions whose opcode it does not know verbatim "
        "(tests/ir/test_parse_errors.py::test_unknown_regular_opcode_is_carried_verbatim): "
        "TensorFlow's XLA may be newer than jaxlib's and know opcodes exla does not. The "
        "XLA that compiles exla's output refuses an opcode it does not know itself."),
    "unknown-attribute": (
        lambda exla, xla: "unexpected attribute" in xla,
        "exla keeps attributes it does not decode verbatim "
        "(test_unknown_attributes_are_carried_verbatim) and has no per-opcode list of "
        "allowed attribute names (those change between XLA versions); XLA refuses a "
        "misspelt one when it compiles exla's output."),
    "missing-attribute": (
        lambda exla, xla: re.search(r"attribute \S+ is expected but not seen", xla) is not None,
        "Likewise, exla has no per-opcode list of required attributes for the opcodes "
        "whose shapes it does not check (scatter, gather, ...); XLA refuses the module "
        "when it compiles exla's output."),
}


# ----- mutations ------------------------------------------------------------------------

INSTRUCTION = re.compile(r"^(\s*)(ROOT )?(%?[\w.\-]+) = (.*?) ([a-z][a-z0-9\-]*)\((.*)$")
SHAPE = re.compile(r"\b(pred|s8|s16|s32|s64|u8|u16|u32|u64|bf16|f16|f32|f64)\[([\d,]*)\]")
ATTRIBUTE = re.compile(r", ([a-z_]+)=(\{[^{}]*\}|[^,\s]+)")
OPCODES = ("add", "multiply", "subtract", "divide", "maximum", "exponential", "tanh", "log",
           "negate", "reshape", "broadcast", "transpose", "reduce", "dot", "select", "compare",
           "convert", "slice", "concatenate", "tuple", "get-tuple-element", "while", "copy",
           "parameter", "constant", "iota", "dynamic-slice", "dynamic-update-slice", "sort",
           "rsqrt", "abs", "bitcast", "pad", "gather", "scatter", "call", "fusion", "nonsense")
TYPES = ("pred", "s32", "s64", "u8", "f16", "bf16", "f32", "f64")
GARBAGE = ("\x00", "\x7f", "@", "$", "#", "\\", "\"", "'", "`", "%", "=", ",", ";", "\t",
           "é", "∑", "\ufeff", "0x1F", "-1", "{", "}", "(", ")", "[", "]", "/*", "*/", "//")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _instruction_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if INSTRUCTION.match(line)]


def _split_operands(inside: str) -> tuple[list[str], str]:
    """The operand list of ``opcode(<inside>`` and what follows its ``)``."""
    depth, start, operands = 0, 0, []
    for i, c in enumerate(inside):
        if c in "({[":
            depth += 1
        elif c in ")}]":
            if depth == 0:
                if inside[start:i].strip():
                    operands.append(inside[start:i].strip())
                return operands, inside[i:]
            depth -= 1
        elif c == "," and depth == 0:
            operands.append(inside[start:i].strip())
            start = i + 1
    return operands, ""


def _names(lines: list[str]) -> list[str]:
    return [INSTRUCTION.match(lines[i]).group(3) for i in _instruction_lines(lines)]


def _drop_operand(text: str, rng: np.random.Generator) -> str | None:
    lines = _lines(text)
    candidates = []
    for i in _instruction_lines(lines):
        m = INSTRUCTION.match(lines[i])
        operands, _ = _split_operands(m.group(6))
        if operands and m.group(5) not in ("constant", "parameter"):
            candidates.append(i)
    if not candidates:
        return None
    i = candidates[rng.integers(len(candidates))]
    m = INSTRUCTION.match(lines[i])
    operands, rest = _split_operands(m.group(6))
    del operands[rng.integers(len(operands))]
    lines[i] = (f"{m.group(1)}{m.group(2) or ''}{m.group(3)} = {m.group(4)} {m.group(5)}("
                + ", ".join(operands) + rest)
    return "\n".join(lines)


def _rename(text: str, rng: np.random.Generator, duplicate: bool) -> str | None:
    """Renames one instruction where it is defined (uses keep the old name), to
    a fresh name or (`duplicate`) to the name of another instruction."""
    lines = _lines(text)
    candidates = _instruction_lines(lines)
    if len(candidates) < 2:
        return None
    i = candidates[rng.integers(len(candidates))]
    m = INSTRUCTION.match(lines[i])
    if duplicate:
        names = [n for n in _names(lines) if n != m.group(3)]
        new = names[rng.integers(len(names))]
    else:
        new = m.group(3) + ".renamed"
    lines[i] = lines[i].replace(m.group(3) + " = ", new + " = ", 1)
    return "\n".join(lines)


def _rename_use(text: str, rng: np.random.Generator) -> str | None:
    """One operand of one instruction refers to a name that exists nowhere."""
    lines = _lines(text)
    candidates = [i for i in _instruction_lines(lines)
                  if _split_operands(INSTRUCTION.match(lines[i]).group(6))[0]
                  and INSTRUCTION.match(lines[i]).group(5) not in ("constant", "parameter")]
    if not candidates:
        return None
    i = candidates[rng.integers(len(candidates))]
    m = INSTRUCTION.match(lines[i])
    operands, rest = _split_operands(m.group(6))
    k = rng.integers(len(operands))
    operands[k] = operands[k] + ".undefined"
    lines[i] = (f"{m.group(1)}{m.group(2) or ''}{m.group(3)} = {m.group(4)} {m.group(5)}("
                + ", ".join(operands) + rest)
    return "\n".join(lines)


def _shape_sites(text: str) -> list[re.Match]:
    return list(SHAPE.finditer(text))


def _change_dimension(text: str, rng: np.random.Generator) -> str | None:
    sites = [s for s in _shape_sites(text) if s.group(2)]
    if not sites:
        return None
    s = sites[rng.integers(len(sites))]
    dims = s.group(2).split(",")
    k = rng.integers(len(dims))
    choice = rng.integers(4)
    if choice == 0:
        dims[k] = str(int(dims[k]) + 1)
    elif choice == 1:
        dims[k] = str(max(int(dims[k]) - 1, 0))
    elif choice == 2:
        dims.append(str(int(rng.integers(1, 5))))  # one more dimension
    else:
        del dims[k]  # one fewer
    return text[:s.start(2)] + ",".join(dims) + text[s.end(2):]


def _change_type(text: str, rng: np.random.Generator) -> str | None:
    sites = _shape_sites(text)
    if not sites:
        return None
    s = sites[rng.integers(len(sites))]
    others = [t for t in TYPES if t != s.group(1)]
    return text[:s.start(1)] + others[rng.integers(len(others))] + text[s.end(1):]


def _truncate(text: str, rng: np.random.Generator) -> str | None:
    return text[:int(rng.integers(len(text)))]


def _delete_line(text: str, rng: np.random.Generator) -> str | None:
    lines = _lines(text)
    useful = [i for i, line in enumerate(lines) if line.strip()]
    del lines[useful[rng.integers(len(useful))]]
    return "\n".join(lines)


def _swap_lines(text: str, rng: np.random.Generator) -> str | None:
    """Two instruction lines of the text trade places (often across computations)."""
    lines = _lines(text)
    candidates = _instruction_lines(lines)
    if len(candidates) < 2:
        return None
    a, b = (int(v) for v in rng.choice(candidates, 2, replace=False))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def _swap_opcode(text: str, rng: np.random.Generator) -> str | None:
    lines = _lines(text)
    candidates = _instruction_lines(lines)
    if not candidates:
        return None
    i = candidates[rng.integers(len(candidates))]
    m = INSTRUCTION.match(lines[i])
    others = [o for o in OPCODES if o != m.group(5)]
    new = others[rng.integers(len(others))]
    start = m.start(5)
    lines[i] = lines[i][:start] + new + lines[i][m.end(5):]
    return "\n".join(lines)


def _corrupt_attribute(text: str, rng: np.random.Generator) -> str | None:
    sites = list(ATTRIBUTE.finditer(text))
    if not sites:
        return None
    s = sites[rng.integers(len(sites))]
    key, value = s.group(1), s.group(2)
    choice = rng.integers(5)
    if choice == 0:  # a number in it changed
        numbers = list(re.finditer(r"\d+", value))
        if not numbers:
            return None
        n = numbers[rng.integers(len(numbers))]
        new_value = value[:n.start()] + str(int(n.group()) + int(rng.integers(1, 4))) + value[n.end():]
        return text[:s.start(2)] + new_value + text[s.end(2):]
    if choice == 1:  # removed
        return text[:s.start()] + text[s.end():]
    if choice == 2:  # misspelt key
        return text[:s.start(1)] + key + "x" + text[s.end(1):]
    if choice == 3:  # emptied
        return text[:s.start(2)] + ("{}" if value.startswith("{") else "") + text[s.end(2):]
    # duplicated
    return text[:s.end()] + s.group() + text[s.end():]


def _unbalance(text: str, rng: np.random.Generator) -> str | None:
    sites = [i for i, c in enumerate(text) if c in "{}()[]"]
    if not sites:
        return None
    i = sites[rng.integers(len(sites))]
    if rng.integers(2):
        return text[:i] + text[i + 1:]  # one removed
    return text[:i] + text[i] + text[i:]  # one doubled


def _garbage(text: str, rng: np.random.Generator) -> str | None:
    i = int(rng.integers(len(text) + 1))
    pieces = [GARBAGE[rng.integers(len(GARBAGE))] for _ in range(int(rng.integers(1, 4)))]
    return text[:i] + "".join(pieces) + text[i:]


def _parameter_number(text: str, rng: np.random.Generator) -> str | None:
    sites = list(re.finditer(r"parameter\((\d+)\)", text))
    if not sites:
        return None
    s = sites[rng.integers(len(sites))]
    new = int(s.group(1)) + int(rng.choice([1, 2, 7, 1000]))
    return text[:s.start(1)] + str(new) + text[s.end(1):]


def _root(text: str, rng: np.random.Generator) -> str | None:
    """A computation loses its ROOT marker, or an instruction gets a second one."""
    lines = _lines(text)
    roots = [i for i, line in enumerate(lines) if line.lstrip().startswith("ROOT ")]
    others = [i for i in _instruction_lines(lines) if i not in roots]
    if rng.integers(2) and roots:
        i = roots[rng.integers(len(roots))]
        lines[i] = lines[i].replace("ROOT ", "", 1)
    elif others:
        i = others[rng.integers(len(others))]
        m = INSTRUCTION.match(lines[i])
        lines[i] = lines[i][:m.start(3)] + "ROOT " + lines[i][m.start(3):]
    else:
        return None
    return "\n".join(lines)


MUTATIONS: dict[str, Callable[[str, np.random.Generator], "str | None"]] = {
    "drop-operand": _drop_operand,
    "rename-definition": lambda t, r: _rename(t, r, duplicate=False),
    "duplicate-name": lambda t, r: _rename(t, r, duplicate=True),
    "undefined-operand": _rename_use,
    "change-dimension": _change_dimension,
    "change-element-type": _change_type,
    "truncate": _truncate,
    "delete-line": _delete_line,
    "swap-lines": _swap_lines,
    "swap-opcode": _swap_opcode,
    "corrupt-attribute": _corrupt_attribute,
    "unbalance": _unbalance,
    "garbage": _garbage,
    "parameter-number": _parameter_number,
    "root": _root,
}


def mutate(text: str, seed: int) -> tuple[str, str]:
    """The mutant of `text` for `seed`: (mutation name, mutated text), deterministic.

    >>> mutate("HloModule m\\n\\nENTRY e {\\n  ROOT p = f32[2] parameter(0)\\n}\\n", 1)[0] in MUTATIONS
    True
    """
    rng = np.random.default_rng(seed)
    names = sorted(MUTATIONS)
    for _ in range(20):
        name = names[rng.integers(len(names))]
        mutated = MUTATIONS[name](text, rng)
        if mutated is not None and mutated != text:
            return name, mutated
    return "truncate", text[: len(text) // 2]


# ----- verdicts --------------------------------------------------------------------------


@dataclasses.dataclass
class Mutant:
    """One mutant and what exla and XLA made of it."""

    id: int
    base: str  # "<program seed>:before" or "<program seed>:after"
    mutation: str
    category: str = ""  # see classify()
    exla: str = ""  # "accept", "ValueError: ...", "<Type>: ...", "crash"
    xla: str = ""  # "accept", "reject: ...", "abort"
    optimized: str = ""  # for a mutant exla accepts: "accept" or what failed
    seconds: float = 0.0


def _has_position(message: str) -> bool:
    return bool(re.search(r"\bline \d+", message) and re.search(r"\bcolumn \d+", message))


def classify(m: Mutant) -> str:
    """The category of a mutant from its verdicts."""
    if m.exla == "crash":
        return "crash"
    exla_rejects = m.exla.startswith("ValueError")
    if not exla_rejects and m.exla != "accept":
        return "bad-exception"
    if exla_rejects and not _has_position(m.exla):
        return "no-position"
    xla_accepts = m.xla == "accept"
    if exla_rejects and xla_accepts:
        for name, (test, _) in INTENDED_STRICTER.items():
            if test(m.exla, m.xla):
                return f"intended-stricter:{name}"
        return "disagree:exla-rejects"
    if not exla_rejects and not xla_accepts:
        for name, (test, _) in INTENDED_LAXER.items():
            if test(m.exla, m.xla):
                return f"intended-laxer:{name}"
        return "disagree:exla-accepts"
    if not exla_rejects and m.optimized != "accept":
        return "optimized-rejected"
    return "agree-reject" if exla_rejects else "agree-accept"


FAILURES = ("crash", "bad-exception", "no-position", "disagree", "optimized-rejected")


class _Xla:
    """XLA's own verdict, without exla's verifier in front of it."""

    def __init__(self) -> None:
        from exla.bridge import xla as bridge

        self.x = bridge._xla()

    def verdict(self, text: str, log: Callable[[str], None], compile_too: bool = False) -> str:
        jx = self.x
        log("xla-parse")
        try:
            module = jx.hlo_module_from_text(text)
            bytecode = jx.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        except Exception as e:  # noqa: BLE001  (XlaRuntimeError, or a TypeError on odd text)
            return f"reject: {type(e).__name__}: {e}"[:1500]
        log("xla-verify")
        try:
            with self.x.make_ir_context():
                parsed = self.x.mlir_ir.Module.parse(bytecode)
                if not parsed.operation.verify():
                    return "reject: the MLIR verifier rejects the converted module"
        except Exception as e:  # noqa: BLE001
            return f"reject: MLIR: {type(e).__name__}: {e}"[:1500]
        if compile_too:
            log("xla-compile")
            client = self.x.cpu_client()
            try:
                client.compile_and_load(bytecode, jx.DeviceList(tuple(client.devices()[:1])),
                                        jx.CompileOptions())
            except Exception as e:  # noqa: BLE001
                return f"reject: compile: {type(e).__name__}: {e}"[:1500]
        return "accept"


def _exla_verdict(text: str) -> str:
    from exla import _core

    try:
        _core.verify(text)
    except Exception as e:  # noqa: BLE001  (anything but a ValueError is a finding)
        return f"{type(e).__name__}: {e}"[:1500]
    return "accept"


def check(mutant: Mutant, text: str, threshold: int, xla: _Xla,
          log: Callable[[str], None]) -> Mutant:
    """Fills in `mutant`'s verdicts. `log` records the stage reached (a child
    that dies leaves it behind: exla's stages make a crash, XLA's an abort)."""
    import exla

    start = time.perf_counter()
    log("exla")
    mutant.exla = _exla_verdict(text)
    mutant.xla = xla.verdict(text, log)
    if mutant.xla == "accept":
        # XLA's HLO verifier runs only in the compiler; the MLIR verifier
        # misses, for one, a reduce computation of f32 for bf16 values.
        mutant.xla = xla.verdict(text, log, compile_too=True)
    if mutant.exla == "accept":
        log("exla-optimize")
        try:
            optimized, _ = exla.optimize_hlo(text, threshold=threshold)
        except Exception as e:  # noqa: BLE001
            mutant.optimized = f"optimize_hlo: {type(e).__name__}: {e}"[:1500]
        else:
            verdict = xla.verdict(optimized, log)
            mutant.optimized = "accept" if verdict == "accept" else f"output: {verdict}"
    mutant.category = classify(mutant)
    mutant.seconds = round(time.perf_counter() - start, 3)
    return mutant


# ----- the run ---------------------------------------------------------------------------


def _bases(n: int, seed: int) -> list[tuple[str, str, int]]:
    """(name, text, threshold) of the base texts for `n` mutants: programs of
    seeds ``seed * 1_000_000 + i``, before and after exla's rewrite."""
    import logging

    from exla.bridge.jax import enable_x64

    import exla

    # Both settings are restored: the test slice runs in the caller's
    # process, whose later JAX programs must not turn float64.
    logger = logging.getLogger("exla")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "cannot meet the threshold" lists
    bases = []
    i = 0
    try:
        with enable_x64():
            while len(bases) * MUTANTS_PER_BASE < n:  # each program gives one or two bases
                program = fp.generate(seed * 1_000_000 + i)
                i += 1
                before = fp.lower(program, fp.make_inputs(program))
                after, _ = exla.optimize_hlo(before, threshold=program.threshold,
                                             split_size=program.split_size)
                bases.append((f"{program.seed}:before", before, program.threshold))
                if after != before:
                    bases.append((f"{program.seed}:after", after, program.threshold))
    finally:
        logger.setLevel(level)
    return bases


def make_mutants(n: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The `n` mutants of run `seed` (dicts with id, base, mutation, text,
    threshold) and the base texts by name."""
    bases = _bases(n, seed)
    mutants = []
    for k in range(n):
        name, text, threshold = bases[k // MUTANTS_PER_BASE]
        mutation, mutated = mutate(text, seed * 1_000_000 + k)
        mutants.append({"id": k, "base": name, "mutation": mutation, "text": mutated,
                        "threshold": threshold})
    return mutants, {name: text for name, text, _ in bases}


def _worker(mutant_file: Path, ids: list[int], progress: Path) -> None:
    """Child process: checks the mutants `ids` of `mutant_file`, one JSON line per event."""
    import logging

    logging.getLogger("exla").setLevel(logging.ERROR)
    wanted = set(ids)
    records = [json.loads(line) for line in mutant_file.read_text().splitlines()]
    records = [r for r in records if r["id"] in wanted]
    xla = _Xla()
    with open(progress, "a", buffering=1) as out:
        for r in records:
            out.write(json.dumps({"start": r["id"]}) + "\n")
            mutant = Mutant(r["id"], r["base"], r["mutation"])
            check(mutant, r["text"], r["threshold"], xla,
                  lambda stage: out.write(json.dumps({"stage": stage}) + "\n"))
            out.write(json.dumps({"done": dataclasses.asdict(mutant)}) + "\n")


def _read(progress: Path) -> tuple[list[Mutant], int | None, str]:
    done, started, stage = [], None, ""
    if progress.exists():
        for line in progress.read_text().splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "start" in event:
                started, stage = event["start"], ""
            elif "stage" in event:
                stage = event["stage"]
            else:
                done.append(Mutant(**event["done"]))
                started = None
    return done, started, stage


def _run_batch(mutant_file: Path, records: dict[int, dict], ids: list[int], timeout_s: float,
               record: Callable[[Mutant], None]) -> None:
    remaining = list(ids)
    while remaining:
        with tempfile.TemporaryDirectory() as tmp:
            progress = Path(tmp) / "progress.jsonl"
            errors = open(Path(tmp) / "stderr.txt", "w+")
            child = subprocess.Popen(
                [sys.executable, "-m", "experiments", "fuzz_mutate", "--worker", str(progress),
                 "--mutants", str(mutant_file), "--ids", ",".join(map(str, remaining))],
                cwd=str(REPO_ROOT), stdout=subprocess.DEVNULL, stderr=errors)
            last, seen, hung = time.monotonic(), 0, False
            while child.poll() is None:
                time.sleep(0.2)
                done, _, _ = _read(progress)
                if len(done) != seen:
                    seen, last = len(done), time.monotonic()
                elif time.monotonic() - last > timeout_s:
                    child.kill()
                    hung = True
                    break
            child.wait()
            errors.seek(0)
            stderr = errors.read()[-3000:]
            errors.close()
            done, started, stage = _read(progress)
        for m in done:
            record(m)
        finished = {m.id for m in done}
        remaining = [i for i in remaining if i not in finished]
        if not remaining:
            break
        culprit = started if started is not None else remaining[0]
        r = records[culprit]
        m = Mutant(culprit, r["base"], r["mutation"])
        died = f"{'hung' if hung else 'died'} (exit {child.returncode}) in {stage or 'start-up'}"
        if stage.startswith("xla"):
            # XLA's parser aborting on malformed text (a CHECK) is XLA's verdict:
            # reject. The mutant is checked again without XLA, in a fresh child.
            m.xla = f"abort: {died}: {stderr[-500:]}"
            m.exla = _exla_in_child(r["text"], mutant_file.parent)
            if m.exla == "accept":
                m.optimized = "not checked (XLA aborts on the mutant)"
        else:
            m.exla = "crash"
            m.xla = f"{died}: {stderr[-1000:]}"
        m.category = classify(m)
        record(m)
        remaining.remove(culprit)


def _exla_in_child(text: str, where: Path) -> str:
    path = where / "exla_only.hlo"
    path.write_text(text)
    code = ("import sys; from experiments import exla_source_paths; "
            "sys.path[:0] = exla_source_paths(); "
            "from experiments.fuzzing.fuzz_mutate import _exla_verdict; "
            f"print(_exla_verdict(open({str(path)!r}).read()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=str(REPO_ROOT), capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        return "crash"
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "crash"


@dataclasses.dataclass
class MutationSummary:
    mutants: list[Mutant] = dataclasses.field(default_factory=list)
    bases: int = 0
    bases_rejected: list[str] = dataclasses.field(default_factory=list)

    def count(self, prefix: str) -> int:
        return sum(1 for m in self.mutants if m.category.startswith(prefix))

    def failures(self) -> list[Mutant]:
        return [m for m in self.mutants if m.category.startswith(FAILURES)]

    def line(self) -> str:
        return (f"bases {self.bases} (exla rejects {len(self.bases_rejected)}) / "
                f"mutants {len(self.mutants)} / exla rejects {self.count('agree-reject')} "
                f"(XLA too) / both accept {self.count('agree-accept')} / disagreements "
                f"{self.count('disagree')} / intended stricter {self.count('intended-stricter')} / "
                f"intended laxer {self.count('intended-laxer')}"
                f" / crashes {self.count('crash')} / other exceptions "
                f"{self.count('bad-exception')} / no position {self.count('no-position')} / "
                f"optimized rejected {self.count('optimized-rejected')}")

    def per_mutation(self) -> dict[str, dict[str, int]]:
        table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for m in self.mutants:
            table[m.mutation][m.category] += 1
        return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}

    def report(self) -> str:
        lines = [self.line()] + [f"  base rejected: {b[:300]}" for b in self.bases_rejected]
        for mutation, counts in self.per_mutation().items():
            lines.append(f"  {mutation}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for m in self.failures():
            lines.append(f"  mutant {m.id} ({m.base}, {m.mutation}): {m.category}: "
                         f"exla {m.exla[:300]!r}; XLA {m.xla[:300]!r}; "
                         f"optimized {m.optimized[:200]!r}")
        return "\n".join(lines)


def _save(out_dir: Path, m: Mutant, text: str, base_text: str) -> None:
    where = out_dir / "mutants" / str(m.id)
    where.mkdir(parents=True, exist_ok=True)
    (where / "mutant.hlo").write_text(text)
    (where / "base.hlo").write_text(base_text)
    (where / "verdict.json").write_text(json.dumps(dataclasses.asdict(m), indent=1))


def run(n: int, seed: int, out_dir: Path = DEFAULT_OUT, batch: int = 200,
        timeout_s: float = 120.0, verbose: bool = True) -> MutationSummary:
    """Makes and checks `n` mutants of run `seed` (see the module's docstring)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    mutants, base_texts = make_mutants(n, seed)
    # The unmutated texts are valid programs (the frontends' and exla's own
    # output): exla must accept every one.
    summary = MutationSummary(bases=len(base_texts))
    for name, text in base_texts.items():
        verdict = _exla_verdict(text)
        if verdict != "accept":
            summary.bases_rejected.append(f"{name}: {verdict}")
            (out_dir / "rejected_bases").mkdir(exist_ok=True)
            (out_dir / "rejected_bases" / f"{name.replace(':', '_')}.hlo").write_text(text)
            if verbose:
                print(f"base {name} rejected by exla: {verdict[:300]}", flush=True)
    mutant_file = out_dir / "mutants.jsonl"
    mutant_file.write_text("".join(json.dumps(r) + "\n" for r in mutants))
    records = {r["id"]: r for r in mutants}
    log = open(out_dir / "verdicts.jsonl", "w", buffering=1)

    def record(m: Mutant) -> None:
        summary.mutants.append(m)
        log.write(json.dumps(dataclasses.asdict(m)) + "\n")
        if m.category.startswith(FAILURES):
            r = records[m.id]
            _save(out_dir, m, r["text"], base_texts[r["base"]])
            if verbose:
                print(f"mutant {m.id} ({m.mutation}): {m.category}: exla {m.exla[:200]!r}; "
                      f"XLA {m.xla[:200]!r}", flush=True)
        if verbose and len(summary.mutants) % 200 == 0:
            print(f"[{len(summary.mutants)}/{n}] {summary.line()}", flush=True)

    ids = [r["id"] for r in mutants]
    for start in range(0, len(ids), batch):
        _run_batch(mutant_file, records, ids[start:start + batch], timeout_s, record)
    log.close()
    summary.mutants.sort(key=lambda m: m.id)
    return summary


def recheck(out_dir: Path, timeout_s: float = 120.0) -> MutationSummary:
    """Checks again, with the code as it is now, every mutant a run kept a
    reproducer of (``<out_dir>/mutants/<id>/``): did a fix remove the finding?"""
    out_dir = Path(out_dir)
    mutant_file = out_dir / "mutants.jsonl"
    ids = sorted(int(d.name) for d in (out_dir / "mutants").iterdir() if d.name.isdigit())
    records = {}
    for line in mutant_file.read_text().splitlines():
        r = json.loads(line)
        if r["id"] in ids:
            records[r["id"]] = r
    summary = MutationSummary()
    _run_batch(mutant_file, records, ids, timeout_s, summary.mutants.append)
    summary.mutants.sort(key=lambda m: m.id)
    return summary


def write_results(summary: MutationSummary, path: Path, command: str, wall_s: float,
                  commit: str) -> None:
    figures = {
        "command": command,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": round(wall_s, 1),
        "bases": summary.bases,
        "bases_rejected": summary.bases_rejected,
        "mutants": len(summary.mutants),
        "categories": dict(sorted(collections.Counter(m.category
                                                      for m in summary.mutants).items())),
        "per_mutation": summary.per_mutation(),
        "intended_stricter": {k: why for k, (_, why) in INTENDED_STRICTER.items()},
        "intended_laxer": {k: why for k, (_, why) in INTENDED_LAXER.items()},
        "failures": [dataclasses.asdict(m) for m in summary.failures()],
        "commit": commit,  # HEAD when the run started
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = argparse.ArgumentParser(prog="python -m experiments fuzz_mutate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="mutants to check")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--batch", type=int, default=200, help="mutants per child process")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="reproducer directory")
    parser.add_argument("--results", type=Path, nargs="?", const=RESULTS_FILE,
                        help="also write the figures as JSON (default path: "
                             "experiments/results/fuzz_mutation_summary.json)")
    parser.add_argument("--recheck", type=Path,
                        help="check again the mutants a run in this directory kept")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mutants", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        _worker(args.mutants, [int(i) for i in args.ids.split(",")], args.worker)
        return 0
    if args.recheck:
        summary = recheck(args.recheck, args.timeout)
        for m in summary.mutants:
            print(f"mutant {m.id} ({m.base}, {m.mutation}): {m.category}: exla {m.exla[:200]!r}")
        print(summary.line())
        return 0 if not summary.failures() else 1
    start, commit = time.time(), machine.commit()
    summary = run(args.n, args.seed, args.out, args.batch, args.timeout)
    wall = time.time() - start
    print(summary.report())
    print(f"({wall:.0f} s; reproducers in {args.out}/mutants)")
    if args.results:
        write_results(summary, args.results, f"python -m experiments fuzz_mutate --n {args.n} "
                      f"--seed {args.seed}", wall, commit)
    return 0 if not summary.failures() and not summary.bases_rejected else 1
