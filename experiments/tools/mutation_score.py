"""Mutation score of the C++ passes: the share of small semantic mutants the C++ tests kill.

    python -m experiments mutation_score [--limit N] [--seed S] [--files GLOB ...]
    python -m experiments mutation_score --rerun-survivors

Each mutant changes one place in cc/passes/**.cc, cc/analysis/**.cc (where
the dimension map and the sharding analysis moved from the splitter) or
cc/model/**.cc with one operator (:data:`OPERATORS`): a comparison flipped
(``<`` to ``<=``...), ``==`` and ``!=`` swapped, a ``+ 1``/``- 1`` dropped or a slice bound shifted by one,
an accumulation or compensation term dropped, two dimension indices swapped.
A seeded sample of the sites (round robin over the operators) is applied, one
at a time, to a scratch copy of the sources (never this checkout); the C++
test binaries are rebuilt there (``make`` rebuilds only the mutated object and
relinks) and run with a timeout. A mutant is *killed* when a test fails,
crashes or times out, *survived* when every binary passes, and *not compiled*
when the build fails. Only the C++ tests (tests/cc) judge: the Python HLO pass
tests need the extension rebuilt, every source of it, for each mutant.

Survivors read and found equivalent are listed in :data:`EQUIVALENT` with the
reason; the summary gives the score with them and without them
(``score_of_killable``). The results go to
experiments/results/mutation_score.json. ``--rerun-survivors`` runs again only
the mutants that survived there (after new tests were added) and keeps the
earlier summary beside the new one as ``before``. Each mutant is a rebuild
(5 to 20 s on two cores, 40 mutants in about 6 minutes): it is not part of
the default test suite.

>>> [m.replacement for m in mutants_of("a.cc", "  if (i < n) return;\\n")]
['<=']
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["Mutant", "OPERATORS", "mutants_of", "find_mutants", "sample", "apply", "main"]

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "experiments" / "results" / "mutation_score.json"
SOURCES = ("cc/passes/**/*.cc", "cc/analysis/**/*.cc", "cc/model/**/*.cc")
BUILD = "build/cctest"


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One change: ``original`` at ``column`` of ``line`` (1-based) of ``path`` becomes
    ``replacement``."""

    path: str
    line: int
    column: int
    operator: str
    original: str
    replacement: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.column}:{self.operator}"


# --- operators: each yields (column, original, replacement) for one line of code -------------

_Edit = tuple[int, str, str]
_COMPARISON = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
# A binary comparison as formatted in cc/: spaces either side (templates and
# shifts are not: `vector<int>`, `<<`).
_COMPARISON_RE = re.compile(r"(?<= )(<=|>=|<|>)(?= )")
_EQUALITY_RE = re.compile(r"(?<= )(==|!=)(?= )")
_PLUS_MINUS_ONE_RE = re.compile(r"(?<=[\w)\]]) [+-] 1\b(?!\.)")
# A slice bound, start or offset read as a value: not declared, assigned or called.
_BOUND_RE = re.compile(r"(?<![\w>*] )(?<![^&]& )(?<![\w:<.>])\b((?:\w+(?:\[\w+\])?(?:\.|->))?"
                       r"[a-z_]*(?:start|limit|offset|bound)s?)\b"
                       r"(?!\s*(?:=(?!=)|[-+*/|&]=|[(\[.:]|->|\+\+|--|\w))")
_ACCUMULATE_RE = re.compile(r"^(\s*)([\w.\[\]>-]+) ([-+*]=) ([^;]+);\s*$")
# A term added or subtracted: `a + b`, `x - y.size()`; not `- 1` (that is off_by_one).
_TERM_RE = re.compile(r"(?<=[\w)\]]) ([+-]) (?!1\b)([A-Za-z_][\w.]*(?:\(\))?(?:\[\w+\])?)"
                      r"(?![\w(\[.]|->)")
_DIMENSION_RE = re.compile(r"\b(dim|dims\(\)|dimensions\(\)|\w*dims|\w*dimensions)"
                           r"([(\[])([01])([)\]])")
_LHS_RHS_RE = re.compile(r"\b(lhs|rhs)_(batch|contracting)\b")


def _comparison(code: str) -> Iterator[_Edit]:
    for match in _COMPARISON_RE.finditer(code):
        yield match.start(), match.group(), _COMPARISON[match.group()]


def _equality(code: str) -> Iterator[_Edit]:
    for match in _EQUALITY_RE.finditer(code):
        yield match.start(), match.group(), "!=" if match.group() == "==" else "=="


def _off_by_one(code: str) -> Iterator[_Edit]:
    """``x + 1`` or ``x - 1`` becomes ``x``; a slice bound ``start`` becomes ``(start + 1)``."""
    for match in _PLUS_MINUS_ONE_RE.finditer(code):
        yield match.start(), match.group(), ""
    if code.lstrip().startswith(("for ", "for(")):
        return
    for match in _BOUND_RE.finditer(code):
        if match.group().endswith("limit") and not re.search(r"(\.|->)limit$", match.group()):
            continue  # a bare `limit` is the memory limit, not a slice's
        yield match.start(), match.group(), f"({match.group()} + 1)"


def _drop_term(code: str) -> Iterator[_Edit]:
    """An accumulation ``total += x;`` becomes a no-op; a term ``a - b`` becomes ``a``."""
    accumulate = _ACCUMULATE_RE.match(code)
    if accumulate:
        start = len(accumulate.group(1))
        yield start, code[start:].rstrip(), f"(void){accumulate.group(2)};"
        return
    for match in _TERM_RE.finditer(code):
        yield match.start(), match.group(), ""


def _swap_dimensions(code: str) -> Iterator[_Edit]:
    """``dim(0)`` and ``dim(1)`` (or ``dims[0]``...) swap; so do ``lhs_batch`` and ``rhs_batch``."""
    for match in _DIMENSION_RE.finditer(code):
        other = "1" if match.group(3) == "0" else "0"
        yield match.start(), match.group(), match.expand(rf"\g<1>\g<2>{other}\g<4>")
    for match in _LHS_RHS_RE.finditer(code):
        other = "rhs" if match.group(1) == "lhs" else "lhs"
        yield match.start(), match.group(), f"{other}_{match.group(2)}"


OPERATORS: dict[str, Callable[[str], Iterator[_Edit]]] = {
    "comparison": _comparison,
    "equality": _equality,
    "off_by_one": _off_by_one,
    "drop_term": _drop_term,
    "swap_dimensions": _swap_dimensions,
}
"""The mutation operators, by name."""

_STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def _code_only(line: str) -> str:
    """``line`` with its string literals and ``//`` comment blanked, columns kept."""
    line = _STRING_RE.sub(lambda m: " " * len(m.group()), line)
    comment = line.find("//")
    return line if comment < 0 else line[:comment] + " " * (len(line) - comment)


def mutants_of(path: str, text: str) -> list[Mutant]:
    """Every mutant of one source file's ``text``, in line order, preprocessor lines skipped."""
    mutants = []
    for number, line in enumerate(text.splitlines(), start=1):
        code = _code_only(line)
        if not code.strip() or code.lstrip().startswith("#"):
            continue
        for name, operator in OPERATORS.items():
            for column, original, replacement in operator(code):
                mutants.append(Mutant(path, number, column, name,
                                      line[column:column + len(original)], replacement))
    return mutants


def find_mutants(root: Path, patterns: tuple[str, ...] = SOURCES) -> list[Mutant]:
    """The mutants of every source under ``root`` that matches one of ``patterns``."""
    paths = sorted({p for pattern in patterns for p in root.glob(pattern)})
    return [m for p in paths for m in mutants_of(str(p.relative_to(root)), p.read_text())]


def sample(mutants: list[Mutant], limit: int, seed: int) -> list[Mutant]:
    """``limit`` mutants, shuffled with ``seed`` per operator and taken round robin."""
    rng = random.Random(seed)
    by_operator = {name: [m for m in mutants if m.operator == name] for name in OPERATORS}
    for group in by_operator.values():
        rng.shuffle(group)
    chosen: list[Mutant] = []
    while len(chosen) < limit and any(by_operator.values()):
        for group in by_operator.values():
            if group and len(chosen) < limit:
                chosen.append(group.pop())
    return chosen


def apply(mutant: Mutant, text: str) -> str:
    """``text`` with ``mutant`` applied (its line must still read as when it was found)."""
    lines = text.splitlines(keepends=True)
    line = lines[mutant.line - 1]
    end = mutant.column + len(mutant.original)
    if line[mutant.column:end] != mutant.original:
        raise ValueError(f"{mutant.id}: the source changed since the mutant was found")
    lines[mutant.line - 1] = line[:mutant.column] + mutant.replacement + line[end:]
    return "".join(lines)


# --- running: a scratch copy, rebuilt and tested per mutant ----------------------------------

class Scratch:
    """A copy of the sources and C++ test build under ``root``, where mutants are built and run."""

    def __init__(self, root: Path, build_timeout: float, test_timeout: float):
        self.root = root
        self.build_timeout = build_timeout
        self.test_timeout = test_timeout

    def create(self, build_from: Path | None) -> None:
        """Copies Makefile, cc/ and tests/cc/ (times kept), and an existing build to start from."""
        if self.root.exists():
            shutil.rmtree(self.root)
        (self.root / "tests").mkdir(parents=True)
        shutil.copy2(REPO / "Makefile", self.root / "Makefile")
        shutil.copytree(REPO / "cc", self.root / "cc")
        shutil.copytree(REPO / "tests" / "cc", self.root / "tests" / "cc")
        if build_from is not None and build_from.is_dir():
            shutil.copytree(build_from, self.root / BUILD)

    def binaries(self) -> list[str]:
        tests = sorted((self.root / "tests" / "cc").rglob("*_test.cc"))
        tests_cc = self.root / "tests" / "cc"
        return [f"{BUILD}/{t.relative_to(tests_cc).with_suffix('')}" for t in tests]

    def build(self) -> tuple[bool, str]:
        """Builds every C++ test binary; (whether it built, the end of make's output)."""
        try:
            done = subprocess.run(["make", "-j2", *self.binaries()], cwd=self.root, text=True,
                                  capture_output=True, timeout=self.build_timeout)
        except subprocess.TimeoutExpired:
            return False, "build timed out"
        return done.returncode == 0, (done.stdout + done.stderr)[-2000:]

    def test(self) -> list[str]:
        """The binaries that failed (a test failed, it crashed or it timed out)."""
        failed = []
        for binary in self.binaries():
            try:
                done = subprocess.run([str(self.root / binary)], cwd=self.root, text=True,
                                      capture_output=True, timeout=self.test_timeout)
                if done.returncode != 0:
                    failed.append(binary)
            except subprocess.TimeoutExpired:
                failed.append(binary)
        return failed

    def run(self, mutant: Mutant) -> dict:
        """Builds and tests ``mutant``, then puts back the source and its object (times kept)."""
        source = self.root / mutant.path
        kept = [source, *(self.root / BUILD / "obj" / Path(mutant.path).with_suffix(s)
                          for s in (".o", ".d")), self.root / BUILD / "libexla_core.a"]
        backups = [Path(f"{p}.mutation-backup") for p in kept]
        for path, backup in zip(kept, backups):
            shutil.copy2(path, backup)
        started = time.monotonic()
        try:
            source.write_text(apply(mutant, source.read_text()))
            built, log = self.build()
            failed = self.test() if built else []
        finally:
            for path, backup in zip(kept, backups):
                shutil.move(backup, path)
            for binary in self.binaries():  # linked with the mutant: relink next time
                (self.root / binary).unlink(missing_ok=True)
        status = "not_compiled" if not built else "killed" if failed else "survived"
        return {**dataclasses.asdict(mutant), "id": mutant.id, "status": status,
                "killed_by": failed, "seconds": round(time.monotonic() - started, 1),
                "build_log": "" if built else log}


# Survivors read and found equivalent: no input the code can receive tells
# them from the original. By mutant id, with the reason.
EQUIVALENT: dict[str, str] = {
    "cc/model/buffers/in_place.cc:84:65:off_by_one":
        "the sentinel last_step() + 1 is only compared as `start < step` with step <= last_step(), "
        "and a real loop start is never above last_step(): last_step() answers the same",
    "cc/model/expand/tree_reduction.cc:17:20:comparison":
        "a reduce dimension equal to the operand's rank is rejected by the verifier before the "
        "model runs; for every valid dimension d < rank and d <= rank agree",
    "cc/model/buffers/tuple_tables.cc:61:21:off_by_one":
        "the loop's tuple operand is scheduled before the loop, so min(step + 1, its start) "
        "is its start, as min(step, its start) is",
    "cc/passes/structured_literals.cc:50:23:comparison":
        "at i == values.size() the index along k is (size / stride) % dims[k] == 0, so the "
        "extra iteration reads nothing and returns nothing",
}


def summarize(rows: list[dict]) -> dict:
    """Counts by status; the score, killed over killed plus survived, with and without
    the survivors in :data:`EQUIVALENT`."""
    counts = {s: sum(r["status"] == s for r in rows)
              for s in ("killed", "survived", "not_compiled")}
    equivalent = sum(r["status"] == "survived" and r["id"] in EQUIVALENT for r in rows)
    judged = counts["killed"] + counts["survived"]
    score = round(counts["killed"] / judged, 3) if judged else None
    killable = judged - equivalent
    return {**counts, "equivalent": equivalent, "mutants": len(rows), "score": score,
            "score_of_killable": round(counts["killed"] / killable, 3) if killable else None}


def _with_reasons(rows: list[dict]) -> list[dict]:
    """``rows``, each survivor found equivalent with its reason."""
    return [{**r, "equivalent": EQUIVALENT[r["id"]]}
            if r["status"] == "survived" and r["id"] in EQUIVALENT else r for r in rows]


def _run_all(scratch: Scratch, mutants: list[Mutant]) -> list[dict]:
    rows = []
    for index, mutant in enumerate(mutants, start=1):
        row = scratch.run(mutant)
        rows.append(row)
        print(f"[{index}/{len(mutants)}] {row['status']:<12} {row['seconds']:>6.1f}s {mutant.id}: "
              f"{mutant.original!r} -> {mutant.replacement!r}", flush=True)
    return rows


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m experiments mutation_score",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=30, help="mutants to run (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("--files", nargs="+", default=list(SOURCES),
                        help="globs of the sources to mutate, from the repository root")
    parser.add_argument("--rerun-survivors", action="store_true",
                        help="run again the mutants that survived in the results file")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/exla-mutation"),
                        help="the scratch copy to build in (replaced)")
    parser.add_argument("--build-from", type=Path, default=REPO / BUILD,
                        help="an existing C++ test build to copy, to start incrementally")
    parser.add_argument("--build-timeout", type=float, default=1200)
    parser.add_argument("--test-timeout", type=float, default=60)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--list", action="store_true", help="count the sites and exit")
    return parser.parse_args(argv)


def _rerun_survivors(scratch: Scratch, output: Path) -> dict:
    """The results file with its survivors run again; the earlier summary kept as ``before``."""
    previous = json.loads(output.read_text())
    fields = {f.name for f in dataclasses.fields(Mutant)}
    survivors = [Mutant(**{k: v for k, v in r.items() if k in fields})
                 for r in previous["mutants"] if r["status"] == "survived"]
    again = {r["id"]: r for r in _run_all(scratch, survivors)}
    rows = [again.get(r["id"], r) for r in previous["mutants"]]
    before = previous.get("before") or summarize(_with_reasons(previous["mutants"]))
    return {**previous, "before": before, "summary": summarize(_with_reasons(rows)),
            "mutants": _with_reasons(rows)}


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    mutants = find_mutants(REPO, tuple(args.files))
    if args.list:
        for name in OPERATORS:
            print(f"{name}: {sum(m.operator == name for m in mutants)} sites")
        return 0
    scratch = Scratch(args.scratch, args.build_timeout, args.test_timeout)
    scratch.create(args.build_from)
    built, log = scratch.build()
    if not built or scratch.test():
        print(f"the unmutated sources do not build or pass their tests:\n{log}", file=sys.stderr)
        return 1
    if args.rerun_survivors:
        report = _rerun_survivors(scratch, args.output)
    else:
        rows = _with_reasons(_run_all(scratch, sample(mutants, args.limit, args.seed)))
        report = {"seed": args.seed, "files": args.files, "sites": len(mutants),
                  "judged_by": "the C++ tests (tests/cc), every binary",
                  "summary": summarize(rows), "mutants": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["summary"]))
    return 0
