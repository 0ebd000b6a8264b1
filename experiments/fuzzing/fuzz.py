"""Differential fuzzer: random TensorFlow and JAX programs, unrewritten against rewritten.

``python -m experiments fuzz --n 2000 --seed S [--jobs 2] [--out DIR] [--results [FILE]]``
(the text-mutation fuzzer is ``python -m experiments fuzz_mutate``)

Each program (:mod:`experiments.fuzzing.fuzz_programs`) is lowered to HLO, rewritten by
``exla.optimize_hlo`` at a threshold small enough to force splitting, and both
modules are run through ``exla.bridge.tensorflow_call.call_hlo``. The verdict
uses the original program's own error as the yardstick: for a float32 program
the float64 twin (same program, same inputs) is the reference, and the
rewritten program fails if its error exceeds ``max(4 x original error,
4 x (condition x eps), 4 x alternative error)``, where ``condition x eps`` is
measured as the change of the float64 result when the inputs move by one ulp of
the program's precision, and the alternative error is that of the *same*
unrewritten program compiled by its frontend's own ``jit`` (another valid
evaluation order: XLA fuses and orders its reductions differently there). The
original's error alone is one draw of its rounding, not a bound: a sum with
cancellation (condition 436 in seed 17000216) is 2.5x more accurate through
one compilation than through the other, and a comparison within one ulp of its
threshold (seed 16000361) flips in JAX's own ``jit`` exactly as in the
rewritten program. A float64 program has no higher reference; its yardstick
is its float32 twin's error scaled by ``eps64 / eps32``, and its alternative
error is the distance between the two compilations. Rewritten and original
are also compared directly (shapes, NaN pattern). A rewrite that fails at the
program's own inputs is judged again over DRAWS draws of inputs (the
program's own first), by the root mean squares of its errors and of the
yardsticks (:func:`judge_draws`): one draw of a rounding error is not its
size.

Programs run in child processes in batches, so a segfault or a hang costs one
program (counted as a crash), not the run. Every failure leaves a reproducer:
``<out>/<seed>/`` with the program, HLO before and after, inputs and outputs
(``.npz``); ``python -m experiments fuzz --replay SEED`` runs one program again.
Every verdict is appended to ``<out>/verdicts.jsonl`` as it comes, so a run cut
short still has its figures (``--summarize --out DIR``).

A mismatch is always a failure. Blame is assigned by ablation
(:func:`ablate`): the pipeline is run again once without each of its passes
(``optimize_hlo(passes=...)``, :func:`exla.default_pipeline` minus one), on the
same inputs and judged the same way (the same draws of inputs when the
mismatch was judged over several), and the verdict lists the passes whose
removal makes the mismatch go away (``Verdict.blame``; empty when no single
removal does, as for a wrong rewrite injected after the pipeline).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from experiments import REPO_ROOT, RESULTS_DIR
from experiments.fuzzing import fuzz_programs as fp
from experiments.harness.machine import commit

EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}
DEFAULT_OUT = Path(tempfile.gettempdir()) / "exla-fuzz"

Rewrite = Callable[[str, fp.Program, "list[str] | None"], "tuple[str, bool]"]


@dataclasses.dataclass
class Verdict:
    """What happened to one program."""

    seed: int
    category: str  # "ok", "mismatch", "exception:...", "crash", "timeout", "skipped:..."
    split: bool = False
    ops: list[str] = dataclasses.field(default_factory=list)
    error_original: float | None = None
    error_rewritten: float | None = None
    yardstick: float | None = None
    draws: int = 1  # input draws judged (more than one when the program's own failed)
    detail: str = ""
    seconds: float = 0.0
    # For a mismatch: the passes whose removal alone makes it go away (see
    # `ablate`), and what each ablation gave ("ok", "mismatch", "unchanged":
    # the pipeline without that pass wrote the same module, or an exception).
    blame: list[str] = dataclasses.field(default_factory=list)
    ablation: dict[str, str] = dataclasses.field(default_factory=dict)


def _normwise(actual: list[np.ndarray], reference: list[np.ndarray]) -> float:
    """max over outputs of max|a - r| / max|r|: error on the output's own scale."""
    worst = 0.0
    for a, r in zip(actual, reference):
        a = np.asarray(a, np.float64)
        r = np.asarray(r, np.float64)
        if a.shape != r.shape:
            return float("inf")
        if a.size == 0:
            continue
        finite = np.isfinite(r)
        if not np.array_equal(finite, np.isfinite(a)):
            return float("inf")
        if not finite.any():
            continue
        scale = max(float(np.max(np.abs(r[finite]))), np.finfo(np.float64).tiny)
        worst = max(worst, float(np.max(np.abs(a[finite] - r[finite]))) / scale)
    return worst


def judge(program: fp.Program, original: list[np.ndarray], rewritten: list[np.ndarray],
          reference: list[np.ndarray], perturbed: list[np.ndarray],
          twin32_error: float | None = None, alternative: list[np.ndarray] | None = None,
          ) -> tuple[bool, float, float, float]:
    """Whether `rewritten` is as accurate as `original`: (ok, err_orig, err_rw, yardstick).

    `reference` is the float64 result, `perturbed` the float64 result with the
    inputs moved by about one ulp of the program's precision (its spread is
    the condition number times eps). For a float64 program `original` is its
    own reference, and `twin32_error` (the float32 twin's error) sets the
    yardstick. `alternative` is the unrewritten program compiled another
    valid way (its frontend's own jit): a rewrite may be as far off as that.
    """
    eps = EPS[program.dtype]
    conditioned = max(_normwise(perturbed, reference), eps)
    if program.dtype == "float32":
        err_orig = _normwise(original, reference)
    else:
        err_orig = (twin32_error or 0.0) * EPS["float64"] / EPS["float32"]
        reference = original
    err_rw = _normwise(rewritten, reference)
    err_alt = _normwise(alternative, reference) if alternative is not None else 0.0
    yardstick = max(4.0 * err_orig, 4.0 * conditioned, 4.0 * err_alt)
    shapes_agree = [np.shape(a) for a in original] == [np.shape(b) for b in rewritten]
    return shapes_agree and err_rw <= yardstick, err_orig, err_rw, yardstick


def default_rewrite(text: str, program: fp.Program, passes: list[str] | None) -> tuple[str, bool]:
    """exla.optimize_hlo at the program's threshold: (new text, whether it split)."""
    import exla

    new_text, report = exla.optimize_hlo(text, threshold=program.threshold,
                                         split_size=program.split_size, passes=passes)
    return new_text, "tensor-splitter" in report.changed_passes


def _scale_parameter(text: str, factor: float = 1.001) -> str:
    """`text` with ENTRY's parameter 0 multiplied by `factor`: a wrong rewrite."""
    import re

    entry = text.index("\nENTRY ")
    pattern = re.compile(r"^(\s*)(%?[\w.\-]+) = ((f32|f64)\[[\d,]*\](?:\{[\d,]*\})?) "
                         r"parameter\(0\)(.*)$", re.M)
    match = pattern.search(text, entry)
    indent, name, shape, element, rest = match.groups()
    lines = [f"{indent}{name}.orig = {shape} parameter(0){rest}",
             f"{indent}{name}.c = {element}[] constant({factor})",
             f"{indent}{name}.b = {shape} broadcast({name}.c), dimensions={{}}",
             f"{indent}{name} = {shape} multiply({name}.orig, {name}.b)"]
    return text[:match.start()] + "\n".join(lines) + text[match.end():]


def _wrong_rewrite(text: str, program: fp.Program, passes: list[str] | None) -> tuple[str, bool]:
    new_text, split = default_rewrite(text, program, passes)
    return _scale_parameter(new_text), split


def _wrong_with_splitter(text: str, program: fp.Program,
                        passes: list[str] | None) -> tuple[str, bool]:
    """Wrong only when the pipeline includes tensor-splitter: ablation must blame it."""
    new_text, split = default_rewrite(text, program, passes)
    if passes is None or "tensor-splitter" in passes:
        new_text = _scale_parameter(new_text)
    return new_text, split


# The fuzzer's self-check (`--inject`): rewrites known to be wrong, which every
# program must report as a mismatch (and the second, blame on tensor-splitter).
INJECTED: dict[str, Rewrite] = {"scale-parameter": _wrong_rewrite,
                                "scale-parameter-with-splitter": _wrong_with_splitter}


def _execute(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    from exla.bridge.tensorflow_call import call_hlo

    return [np.asarray(o) for o in call_hlo(text, list(args))]


def _perturb(args: list[np.ndarray], eps: float, seed: int, draw: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed + 2 if draw == 0 else [seed, draw, 2])
    return [a.astype(np.float64) * (1.0 + eps * rng.choice([-1.0, 1.0], size=a.shape))
            for a in args]


@dataclasses.dataclass
class _Measured:
    """The unrewritten program at one set of inputs, and what judges a rewrite there."""

    args: list[np.ndarray]
    original: list[np.ndarray]
    reference: list[np.ndarray]
    perturbed: list[np.ndarray]
    twin32_error: float | None
    alternative: list[np.ndarray]

    def judge(self, program: fp.Program, rewritten: list[np.ndarray]
              ) -> tuple[bool, float, float, float]:
        return judge(program, self.original, rewritten, self.reference, self.perturbed,
                     self.twin32_error, self.alternative)


def _measure(program: fp.Program, before: str, draw: int) -> _Measured:
    """Runs the unrewritten program, its float64 twin and its frontend's jit at
    the inputs of `draw` (0: the program's own)."""
    args = fp.make_inputs(program, draw)
    args64 = [a.astype(np.float64) for a in args]
    original = _execute(before, args)
    reference, perturbed = fp.run_direct(
        program.twin("float64"), args64, _perturb(args, EPS[program.dtype], program.seed, draw))
    twin32_error = None
    if program.dtype == "float64":
        twin32 = program.twin("float32")
        twin32_error = _normwise(
            fp.run_direct(twin32, [a.astype(np.float32) for a in args])[0], reference)
        alternative = reference  # the frontend's own jit of this very program
    else:
        alternative = fp.run_direct(program, args)[0]
    return _Measured(args, original, reference, perturbed, twin32_error, alternative)


# A rewrite that fails the yardstick at the program's own inputs is judged
# again over this many draws of inputs in all (the program's own first).
DRAWS = 5


def _rms(values: Iterable[float]) -> float:
    values = np.asarray(list(values), np.float64)
    return float(np.sqrt(np.mean(values * values)))


def judge_draws(draws: list[tuple[bool, float, float, float]]) -> bool:
    """Whether a rewrite is as accurate as the original over several input draws.

    `draws` holds :func:`judge`'s answer at each draw. One draw of a program's
    rounding error is not its size: a float32 mean of log(1 + a*a) (seed
    22000000000427) errs by 1.1e-6 at its own inputs and by 5.4e-6 in median
    over 40 draws of them, because XLA's reduction of the logs errs by about
    +5e-6 and the rounding of 1 + a*a by about -5.7e-6, and only at some
    inputs do the two cancel. So the rewritten program's errors, root mean
    square over the draws, must stay within the yardsticks' root mean square:
    a rewrite worse at every draw still fails, one that met a lucky draw of
    the original does not. Shapes and NaN patterns must agree at every draw.

    >>> judge_draws([(False, 1e-7, 5e-6, 4e-7)] + [(True, 5e-6, 5e-6, 2e-5)] * 4)
    True
    >>> judge_draws([(False, 1e-7, 5e-6, 4e-7)] + [(False, 1e-6, 5e-6, 4e-6)] * 4)
    False
    """
    if any(not np.isfinite(rewritten) for _, _, rewritten, _ in draws):
        return False
    return _rms(d[2] for d in draws) <= _rms(d[3] for d in draws)


def run_program(seed: int, rewrite: Rewrite = default_rewrite,
                out_dir: Path | None = None) -> Verdict:
    """Generates, rewrites, runs and judges the program of `seed`."""
    start = time.perf_counter()
    program = fp.generate(seed)
    verdict = Verdict(seed, "ok", ops=program.ops())
    args = fp.make_inputs(program)
    try:
        before = fp.lower(program, args)
        own = _measure(program, before, 0)
    except Exception as e:  # noqa: BLE001  (the program itself does not run: a generator fault)
        verdict.category = "skipped:frontend"
        verdict.detail = f"{type(e).__name__}: {e}"[:2000]
        return _finish(verdict, start)
    original, reference = own.original, own.reference

    def attempt(passes: list[str] | None) -> tuple[str, str, list[np.ndarray] | None]:
        """(category, after text, outputs) of one rewrite; category '' when it ran."""
        try:
            after, split = rewrite(before, program, passes)
            if passes is None:
                verdict.split = split
        except Exception as e:  # noqa: BLE001
            verdict.detail = f"optimize: {type(e).__name__}: {e}"[:2000]
            return "exception:optimize", "", None
        if after == before:
            return "", after, original
        try:
            return "", after, _execute(after, args)
        except Exception as e:  # noqa: BLE001
            verdict.detail = f"run rewritten: {type(e).__name__}: {e}"[:2000]
            return "exception:run-rewritten", after, None

    category, after, rewritten = attempt(None)
    if not category:
        judged = own.judge(program, rewritten)
        ok, verdict.error_original, verdict.error_rewritten, verdict.yardstick = judged
        same_shapes = [np.shape(a) for a in original] == [np.shape(b) for b in rewritten]
        more: list[_Measured] = []
        if not ok and after != before and same_shapes:
            ok = _judge_more_draws(program, before, after, judged, verdict, more)
        if not ok:
            category = "mismatch"
            verdict.detail = (f"rewritten error {verdict.error_rewritten:.3g} > yardstick "
                              f"{verdict.yardstick:.3g} (original {verdict.error_original:.3g})"
                              + (f", root mean squares over {verdict.draws} input draws"
                                 if verdict.draws > 1 else ""))
            verdict.ablation = ablate(program, before, after, rewrite, [own] + more)
            verdict.blame = [p for p, result in verdict.ablation.items() if result == "ok"]
            verdict.detail += ("; goes away without " + ", ".join(verdict.blame)
                               if verdict.blame else "; no single pass's removal removes it")
    verdict.category = category or "ok"
    if verdict.category != "ok" and out_dir is not None:
        save_reproducer(out_dir, program, args, before, after,
                        {"original": original, "rewritten": rewritten or [],
                         "reference": reference}, verdict)
    return _finish(verdict, start)


def _judge_more_draws(program: fp.Program, before: str, after: str,
                      own: tuple[bool, float, float, float], verdict: Verdict,
                      measured_draws: list[_Measured] | None = None) -> bool:
    """Judges the rewrite over DRAWS input draws (see :func:`judge_draws`);
    records their figures in `verdict`, and appends the measured draws (after
    the program's own) to `measured_draws`."""
    draws = [own]
    try:
        for draw in range(1, DRAWS):
            measured = _measure(program, before, draw)
            if measured_draws is not None:
                measured_draws.append(measured)
            draws.append(measured.judge(program, _execute(after, measured.args)))
    except Exception as e:  # noqa: BLE001  (judged at the program's own inputs only)
        verdict.detail = f"input draw {len(draws)}: {type(e).__name__}: {e}"[:2000]
        return False
    verdict.draws = len(draws)
    verdict.error_original = _rms(d[1] for d in draws)
    verdict.error_rewritten = _rms(d[2] for d in draws)
    verdict.yardstick = _rms(d[3] for d in draws)
    verdict.detail = (f"over {len(draws)} input draws (root mean square): rewritten "
                      f"{verdict.error_rewritten:.3g}, yardstick {verdict.yardstick:.3g}, "
                      f"original {verdict.error_original:.3g}; at the program's own inputs: "
                      f"rewritten {own[2]:.3g}, yardstick {own[3]:.3g}, original {own[1]:.3g}")
    return judge_draws(draws)


def ablate(program: fp.Program, before: str, after: str, rewrite: Rewrite,
           measured: list[_Measured]) -> dict[str, str]:
    """Blame by ablation: for each pass of the default pipeline, the pipeline
    without it, judged on the same inputs as the mismatch it is to explain.

    `measured` holds the unrewritten program at the inputs the mismatch was
    judged on (the program's own first, then the other draws if it was judged
    over several); each ablated module is judged there exactly as the full
    pipeline's was (:meth:`_Measured.judge`, over several draws by
    :func:`judge_draws`). Returns pass -> "ok" (its removal makes the mismatch
    go away), "mismatch" (it does not), "unchanged" (the pipeline without it
    writes the very module that mismatched, so it cannot be the cause) or
    "exception: ..." (the shortened pipeline, or its module, fails).
    """
    from exla.optimize import default_pipeline

    results: dict[str, str] = {}
    pipeline = default_pipeline()
    for name in pipeline:
        passes = [p for p in pipeline if p != name]
        try:
            ablated, _ = rewrite(before, program, passes)
            if ablated == after:
                results[name] = "unchanged"
                continue
            draws = [m.judge(program, m.original if ablated == before
                             else _execute(ablated, m.args)) for m in measured]
        except Exception as e:  # noqa: BLE001
            results[name] = f"exception: {type(e).__name__}: {e}"[:300]
            continue
        ok = draws[0][0] if len(draws) == 1 else judge_draws(draws)
        results[name] = "ok" if ok else "mismatch"
    return results


def _finish(verdict: Verdict, start: float) -> Verdict:
    verdict.seconds = round(time.perf_counter() - start, 3)
    return verdict


def _as_arrays(prefix: str, arrays: Iterable[np.ndarray]) -> dict[str, np.ndarray]:
    return {f"{prefix}{i}": np.asarray(a) for i, a in enumerate(arrays)}


def save_reproducer(out_dir: Path, program: fp.Program, args: list[np.ndarray], before: str,
                    after: str, outputs: dict[str, list[np.ndarray]], verdict: Verdict) -> Path:
    """Writes `<out_dir>/<seed>/`: program.json, before.hlo, after.hlo, inputs.npz, outputs.npz."""
    where = Path(out_dir) / str(program.seed)
    where.mkdir(parents=True, exist_ok=True)
    (where / "program.json").write_text(json.dumps(
        {"program": dataclasses.asdict(program), "description": program.describe(),
         "verdict": dataclasses.asdict(verdict),
         "replay": f"python -m experiments fuzz --replay {program.seed}"}, indent=1))
    (where / "before.hlo").write_text(before)
    (where / "after.hlo").write_text(after)
    np.savez(where / "inputs.npz", *args)
    arrays: dict[str, np.ndarray] = {}
    for name, values in outputs.items():
        arrays.update(_as_arrays(f"{name}_", values))
    np.savez(where / "outputs.npz", **arrays)
    return where


# ----- batches in child processes ------------------------------------------------------


def _worker(seeds: list[int], progress: Path, out_dir: Path, inject: str | None = None) -> None:
    """Child process: runs `seeds`, appending one JSON line per event to `progress`."""
    import jax

    jax.config.update("jax_enable_x64", True)  # float64 twins; float32 programs stay float32
    with open(progress, "a", buffering=1) as log:
        for seed in seeds:
            log.write(json.dumps({"start": seed}) + "\n")
            try:
                verdict = run_program(seed, INJECTED[inject] if inject else default_rewrite,
                                      out_dir)
            except Exception as e:  # noqa: BLE001  (a fault of the fuzzer: counted, not fatal)
                verdict = Verdict(seed, "skipped:fuzzer", detail=f"{type(e).__name__}: {e}")
            log.write(json.dumps({"done": dataclasses.asdict(verdict)}) + "\n")


def _read_progress(path: Path) -> tuple[list[Verdict], int | None]:
    done: list[Verdict] = []
    started = None
    if not path.exists():
        return done, None
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a crash
            continue
        if "start" in event:
            started = event["start"]
        else:
            done.append(Verdict(**event["done"]))
            started = None
    return done, started


def _run_batch(seeds: list[int], out_dir: Path, timeout_s: float,
               on_verdict: Callable[[Verdict], None], inject: str | None = None) -> None:
    """Runs `seeds` in children until each has a verdict; a child that dies or
    hangs costs the program it was running, which is counted as a crash."""
    remaining = list(seeds)
    while remaining:
        with tempfile.TemporaryDirectory() as tmp:
            progress = Path(tmp) / "progress.jsonl"
            command = [sys.executable, "-m", "experiments", "fuzz", "--worker", str(progress),
                       "--out", str(out_dir), "--seeds", ",".join(map(str, remaining))]
            if inject:
                command += ["--inject", inject]
            # stderr goes to a file, not a pipe: a child that logs more than a
            # pipe holds (64 KB; exla's warnings list every tensor it left)
            # would block on the write and look hung.
            errors = open(Path(tmp) / "stderr.txt", "w+")
            child = subprocess.Popen(command, cwd=str(REPO_ROOT), stdout=subprocess.DEVNULL,
                                     stderr=errors, text=True)
            last_change, seen, hung = time.monotonic(), 0, False
            while child.poll() is None:
                time.sleep(0.5)
                done, _ = _read_progress(progress)
                if len(done) != seen:
                    seen, last_change = len(done), time.monotonic()
                elif time.monotonic() - last_change > timeout_s:
                    child.kill()
                    hung = True
                    break
            child.wait()
            errors.seek(0)
            stderr = errors.read()[-20000:]
            errors.close()
            done, started = _read_progress(progress)
        for verdict in done:
            on_verdict(verdict)
        finished = {v.seed for v in done}
        remaining = [s for s in remaining if s not in finished]
        if not remaining:
            break
        # The child died: the program it had started (or, if it died before
        # starting one, the first remaining) is the crash.
        culprit = started if started is not None else remaining[0]
        program = fp.generate(culprit)
        # A program the watchdog stopped is a timeout (a hang, or a machine
        # too loaded for --timeout), not a crash of exla.
        crash = Verdict(culprit, "timeout" if hung else "crash", ops=program.ops(),
                        detail=f"child exit {child.returncode}"
                               f"{' after ' + str(timeout_s) + ' s without progress' if hung else ''}: "
                               f"{stderr[-1500:]}")
        _save_crash(out_dir, program, crash)
        on_verdict(crash)
        remaining.remove(culprit)


def _save_crash(out_dir: Path, program: fp.Program, verdict: Verdict) -> None:
    args = fp.make_inputs(program)
    try:
        before = fp.lower(program, args)
    except Exception as e:  # noqa: BLE001
        before = f"// lowering failed: {e}"
    save_reproducer(out_dir, program, args, before, "", {}, verdict)


@dataclasses.dataclass
class Summary:
    """Counts of a fuzzing run."""

    verdicts: list[Verdict] = dataclasses.field(default_factory=list)

    def add(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)

    def count(self, prefix: str) -> int:
        return sum(1 for v in self.verdicts if v.category.startswith(prefix))

    def line(self) -> str:
        return (f"tried {len(self.verdicts)} / split {sum(v.split for v in self.verdicts)} / "
                f"mismatches {self.count('mismatch')} / crashes {self.count('crash')} / "
                f"exceptions {self.count('exception')} / timeouts {self.count('timeout')}")

    def categories(self) -> dict[str, int]:
        return dict(sorted(collections.Counter(v.category for v in self.verdicts).items()))

    def per_op(self) -> dict[str, tuple[int, int, int]]:
        """op -> (programs using it, split, not ok)."""
        table: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        for v in self.verdicts:
            for op in v.ops:
                row = table[op]
                row[0] += 1
                row[1] += v.split
                row[2] += v.category != "ok"
        return {op: tuple(row) for op, row in sorted(table.items())}

    def report(self) -> str:
        lines = [self.line(), "categories: " + ", ".join(
            f"{k} {n}" for k, n in self.categories().items())]
        lines.append("per op (programs / split / failed): " + ", ".join(
            f"{op} {a}/{b}/{c}" for op, (a, b, c) in self.per_op().items()))
        for v in self.verdicts:
            if v.category != "ok":
                lines.append(f"  seed {v.seed}: {v.category}: {v.detail[:300]}")
        return "\n".join(lines)


RESULTS_FILE = RESULTS_DIR / "fuzz_summary.json"


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _runs(out_dir: Path) -> list[dict[str, Any]]:
    """The invocations recorded in ``<out_dir>/runs.jsonl`` (one per start or --resume)."""
    path = Path(out_dir) / "runs.jsonl"
    if not path.exists():
        return []
    runs: dict[float, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            event = json.loads(line)
            runs.setdefault(event["started"], {}).update(event)
    return list(runs.values())


def write_results(summary: "Summary", out_dir: Path, path: Path, n: int | None = None) -> dict:
    """Writes the figures of the run recorded in `out_dir` to `path` (JSON).

    Wall time is that of the invocations (``runs.jsonl``): from each start to
    its end, or, for one still running or cut short, to the last verdict."""
    runs = _runs(out_dir)
    log = Path(out_dir) / "verdicts.jsonl"
    last = log.stat().st_mtime if log.exists() else time.time()
    wall = sum((r.get("finished") or last) - r["started"] for r in runs)
    by = collections.defaultdict(lambda: collections.Counter())
    for v in summary.verdicts:
        program = fp.generate(v.seed)
        by[f"{program.frontend} {program.dtype}"]["tried"] += 1
        by[f"{program.frontend} {program.dtype}"][v.category] += 1
    figures = {
        "commands": [r["command"] for r in runs],
        "started": _utc(min(r["started"] for r in runs)) if runs else None,
        "finished": _utc(max(r.get("finished") or last for r in runs)) if runs else None,
        "complete": bool(runs) and all("finished" in r for r in runs)
        and (n is None or len(summary.verdicts) == n),
        "wall_s": round(wall, 1),
        "program_s": round(sum(v.seconds for v in summary.verdicts), 1),
        "requested": n,
        "tried": len(summary.verdicts),
        "split": sum(v.split for v in summary.verdicts),
        "mismatches": summary.count("mismatch"),
        "crashes": summary.count("crash"),
        "exceptions": summary.count("exception"),
        "timeouts": summary.count("timeout"),
        "skipped": summary.count("skipped"),
        "categories": summary.categories(),
        "per_frontend_dtype": {k: dict(c) for k, c in sorted(by.items())},
        "per_op": {op: dict(zip(("programs", "split", "failed"), row))
                   for op, row in summary.per_op().items()},
        "failures": [dataclasses.asdict(v) for v in summary.verdicts if v.category != "ok"],
        "commits": sorted({r.get("commit", "") for r in runs}),
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


def fuzz(n: int, seed: int, out_dir: Path = DEFAULT_OUT, jobs: int = 1, batch: int = 40,
         timeout_s: float = 300.0, verbose: bool = True, inject: str | None = None,
         resume: bool = False) -> Summary:
    """Runs `n` programs (seeds ``seed*1_000_000 + i``) in child processes.

    With `resume`, verdicts already in ``<out_dir>/verdicts.jsonl`` are kept
    and their programs not run again.
    """
    import concurrent.futures
    import threading

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = [seed * 1_000_000 + i for i in range(n)]
    summary = Summary()
    log_path = out_dir / "verdicts.jsonl"
    if resume and log_path.exists():  # a run cut short: keep its verdicts, run the rest
        for line in log_path.read_text().splitlines():
            verdict = Verdict(**json.loads(line))
            if verdict.seed in seeds and verdict.seed not in {v.seed for v in summary.verdicts}:
                summary.add(verdict)
        done = {v.seed for v in summary.verdicts}
        seeds = [s for s in seeds if s not in done]
    batches = [seeds[i:i + batch] for i in range(0, len(seeds), batch)]
    lock = threading.Lock()

    log = open(log_path, "a", buffering=1)
    run = {"started": time.time(), "command": " ".join(
        ["python -m experiments fuzz", f"--n {n} --seed {seed} --jobs {jobs}"]
        + ([f"--inject {inject}"] if inject else []) + (["--resume"] if resume else [])),
        "commit": commit()}
    with open(out_dir / "runs.jsonl", "a") as runs:
        runs.write(json.dumps(run) + "\n")

    def record(verdict: Verdict) -> None:
        with lock:
            summary.add(verdict)
            log.write(json.dumps(dataclasses.asdict(verdict)) + "\n")
            if verbose and (verdict.category != "ok" or len(summary.verdicts) % 25 == 0):
                print(f"[{len(summary.verdicts)}/{n}] seed {verdict.seed} {verdict.category} "
                      f"{verdict.detail[:200]}", flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda b: _run_batch(b, out_dir, timeout_s, record, inject), batches))
    log.close()
    with open(out_dir / "runs.jsonl", "a") as runs:
        runs.write(json.dumps({"started": run["started"], "finished": time.time()}) + "\n")
    summary.verdicts.sort(key=lambda v: v.seed)
    return summary


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = argparse.ArgumentParser(prog="python -m experiments fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="programs to try")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--jobs", type=int, default=1, help="child processes at once")
    parser.add_argument("--batch", type=int, default=40, help="programs per child process")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="reproducer directory")
    parser.add_argument("--replay", type=int, help="run the program of one seed, in-process")
    parser.add_argument("--resume", action="store_true",
                        help="keep the verdicts already in --out and run only the rest")
    parser.add_argument("--summarize", action="store_true",
                        help="print the summary of the verdicts recorded in --out (a run so far)")
    parser.add_argument("--inject", choices=sorted(INJECTED),
                        help="self-check: use a known-wrong rewrite (every program must mismatch)")
    parser.add_argument("--results", type=Path, nargs="?", const=RESULTS_FILE,
                        help="also write the run's figures as JSON (default path: "
                             "experiments/results/fuzz_summary.json); with --summarize, "
                             "those of the run so far")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        _worker([int(s) for s in args.seeds.split(",")], args.worker, args.out, args.inject)
        return 0
    if args.summarize:
        summary = Summary()
        for line in (args.out / "verdicts.jsonl").read_text().splitlines():
            verdict = Verdict(**json.loads(line)) if line else None
            if verdict and verdict.seed not in {v.seed for v in summary.verdicts}:
                summary.add(verdict)
        summary.verdicts.sort(key=lambda v: v.seed)
        print(summary.report())
        if args.results:
            write_results(summary, args.out, args.results, args.n)
        return 0
    if args.replay is not None:
        import jax

        jax.config.update("jax_enable_x64", True)
        print(fp.generate(args.replay).describe())
        verdict = run_program(args.replay, INJECTED[args.inject] if args.inject
                              else default_rewrite, args.out)
        print(json.dumps(dataclasses.asdict(verdict), indent=1))
        return 0 if verdict.category == "ok" else 1
    start = time.time()
    summary = fuzz(args.n, args.seed, args.out, args.jobs, args.batch, args.timeout,
                   inject=args.inject, resume=args.resume)
    print(summary.report())
    print(f"({time.time() - start:.0f} s; reproducers in {args.out})")
    if args.results:
        write_results(summary, args.out, args.results, args.n)
        print(f"figures in {args.results}")
    return 0 if summary.line().endswith(
        "mismatches 0 / crashes 0 / exceptions 0 / timeouts 0") else 1
