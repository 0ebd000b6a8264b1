"""The differential fuzzer (experiments/fuzzing/fuzz.py): a quick slice, proof that it
catches a wrong rewrite and blames the right pass; and a slice of the
text-mutation fuzzer (experiments/fuzzing/fuzz_mutate.py)."""

from __future__ import annotations

import json

import pytest

from exla.optimize import default_pipeline

from experiments import REPO_ROOT
from experiments.fuzzing import fuzz
from tests._extension import load_extension

load_extension()


def test_quick_slice_finds_nothing(tmp_path):
    """~2 minutes of random programs: no crash, no exception, no timeout and
    no mismatch of any kind. A mismatch would carry its blame by ablation
    (the passes whose removal alone makes it go away) in the report."""
    summary = fuzz.fuzz(70, seed=16, out_dir=tmp_path, verbose=False)
    print("\n" + summary.report())
    assert len(summary.verdicts) == 70
    assert summary.count("crash") == 0, summary.report()
    assert summary.count("exception") == 0, summary.report()
    assert summary.count("timeout") == 0, summary.report()
    assert summary.count("skipped") == 0, summary.report()  # the generator's own faults
    assert summary.count("mismatch") == 0, summary.report()
    assert summary.categories() == {"ok": 70}, summary.report()
    # The thresholds are chosen to force splitting: most programs must split.
    assert sum(v.split for v in summary.verdicts) >= 0.6 * len(summary.verdicts)


def test_a_wrong_rewrite_is_reported_with_a_reproducer(tmp_path):
    """A rewrite that scales parameter 0 by 1.001 (a 0.1% error, thousands of
    float32 ulps) must be a mismatch in every program, and leave a reproducer."""
    summary = fuzz.fuzz(6, seed=3, out_dir=tmp_path, verbose=False, inject="scale-parameter")
    print("\n" + summary.report())
    assert [v.category for v in summary.verdicts] == ["mismatch"] * 6, summary.report()
    for v in summary.verdicts:
        where = tmp_path / str(v.seed)
        assert {"program.json", "before.hlo", "after.hlo", "inputs.npz",
                "outputs.npz"} <= {p.name for p in where.iterdir()}
        assert "constant(1.001)" in (where / "after.hlo").read_text()
        assert json.loads((where / "program.json").read_text())["program"]["seed"] == v.seed


def test_blame_goes_to_the_pass_whose_removal_removes_the_mismatch(tmp_path):
    """Ablation: a rewrite that is wrong only when tensor-splitter runs is
    blamed on tensor-splitter alone (the pipeline without it, on the same
    inputs, passes); one that is wrong whatever the passes is blamed on none."""
    summary = fuzz.fuzz(2, seed=3, out_dir=tmp_path / "splitter", verbose=False,
                        inject="scale-parameter-with-splitter")
    print("\n" + summary.report())
    assert [v.category for v in summary.verdicts] == ["mismatch"] * 2, summary.report()
    for v in summary.verdicts:
        assert v.blame == ["tensor-splitter"], v
        assert v.ablation["tensor-splitter"] == "ok", v
        assert "goes away without tensor-splitter" in v.detail, v
    summary = fuzz.fuzz(1, seed=3, out_dir=tmp_path / "always", verbose=False,
                        inject="scale-parameter")
    (v,) = summary.verdicts
    assert v.category == "mismatch" and v.blame == [], v
    assert set(v.ablation) == set(default_pipeline()), v
    assert "mismatch" in v.ablation.values(), v


def test_the_comparator_uses_the_original_error_as_yardstick():
    """judge(): a rewrite within 4x of the original's error passes, one beyond fails."""
    import numpy as np

    program = fuzz.fp.generate(0).twin("float32")
    reference = [np.linspace(1.0, 2.0, 100)]
    original = [reference[0] * (1 + 1e-6)]
    perturbed = [reference[0] * (1 + 1e-8)]
    assert fuzz.judge(program, original, [reference[0] * (1 + 3e-6)], reference, perturbed)[0]
    assert not fuzz.judge(program, original, [reference[0] * (1 + 5e-6)], reference, perturbed)[0]
    nan = [reference[0].copy()]
    nan[0][3] = np.nan
    assert not fuzz.judge(program, original, nan, reference, perturbed)[0]
    assert not fuzz.judge(program, original, [reference[0][:5]], reference, perturbed)[0]


def test_the_comparator_accepts_what_another_compilation_of_the_original_gives():
    """judge(): the frontend's own jit of the unrewritten program widens the yardstick."""
    import numpy as np

    program = fuzz.fp.generate(0).twin("float32")
    reference = [np.linspace(1.0, 2.0, 100)]
    original = [reference[0] * (1 + 1e-7)]
    perturbed = [reference[0] * (1 + 1e-8)]
    rewritten = [reference[0] * (1 + 1e-6)]
    assert not fuzz.judge(program, original, rewritten, reference, perturbed)[0]
    jit = [reference[0] * (1 - 5e-7)]  # a valid evaluation 5x further off than `original`
    ok, _, _, yardstick = fuzz.judge(program, original, rewritten, reference, perturbed,
                                     alternative=jit)
    assert ok and yardstick == pytest.approx(2e-6)
    assert not fuzz.judge(program, original, [reference[0] * (1 + 3e-6)], reference, perturbed,
                          alternative=jit)[0]


def test_a_rewrite_that_failed_one_draw_is_judged_over_several():
    """judge_draws(): root mean squares over the draws, not the first draw alone."""
    unlucky = (False, 1e-7, 5e-6, 4e-7)  # the original met a lucky draw here
    assert fuzz.judge_draws([unlucky] + [(True, 5e-6, 5e-6, 2e-5)] * 4)
    # Worse than the original at every draw: still a mismatch.
    assert not fuzz.judge_draws([unlucky] + [(False, 1e-6, 5e-6, 4e-6)] * 4)
    # A shape or NaN mismatch (infinite error) at any draw is one.
    assert not fuzz.judge_draws([unlucky] + [(True, 5e-6, 5e-6, 2e-5)] * 3
                                + [(False, 5e-6, float("inf"), 2e-5)])


def test_inputs_of_other_draws_differ_and_the_programs_own_stay():
    program = fuzz.fp.generate(22000000000427)
    own = fuzz.fp.make_inputs(program)
    assert all((a == b).all() for a, b in zip(own, fuzz.fp.make_inputs(program, 0)))
    other = fuzz.fp.make_inputs(program, 1)
    assert [a.shape for a in other] == [a.shape for a in own]
    assert not any((a == b).all() for a, b in zip(own, other))


@pytest.mark.parametrize("seed", [1, 2])
def test_programs_are_reproducible(seed):
    assert fuzz.fp.generate(seed) == fuzz.fp.generate(seed)
    a, b = fuzz.fp.make_inputs(fuzz.fp.generate(seed)), fuzz.fp.make_inputs(fuzz.fp.generate(seed))
    assert all((x == y).all() for x, y in zip(a, b))


def _replay(seed: int, out_dir) -> tuple[int, dict]:
    """Replays one program in a child process: (exit status, its verdict)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import exla

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(Path(exla.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "experiments", "fuzz", "--replay", str(seed),
                           "--out", str(out_dir)], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    verdict = done.stdout[done.stdout.find("\n{") + 1:]  # after the program's description
    assert verdict.startswith("{"), done.stdout[-3000:] + done.stderr[-2000:]
    return done.returncode, json.loads(verdict)


@pytest.mark.parametrize("seed", [20000000000329, 20000000000879, 21000000000037])
def test_max_gradients_found_by_the_long_run_compute_the_same(seed, tmp_path):
    """Programs of the 1,000-program runs (gradients of a max, which compare
    the maximum with every element): the loops recomputed the dot (or a log1p
    after it) slice by slice, rounded differently from the copy the maximum
    came from, and the gradient was 5-100% off. A value compared for
    equality is now computed once."""
    status, verdict = _replay(seed, tmp_path)
    assert status == 0 and verdict["category"] == "ok", verdict


def test_chunked_mean_of_a_gram_matrix_is_as_accurate_as_the_original(tmp_path):
    """Seed 21000000000420 of the second 1,000-program run: the float32 mean
    of a 108 x 313 Gram matrix, split into chunks of 18 columns. Each chunk
    was summed to a scalar, which XLA does in runs of 576 products (32 rows
    of the chunk) one after the other: 1.44e-6 from the float64 reference,
    12 times the original's 1.18e-7. The loop now sums each chunk along the
    split columns only and the rows once, after the loop: 7.7e-9. Held to
    the original's own error (4x), not to the wider yardstick of another
    compilation that the fuzzer also accepts."""
    status, verdict = _replay(21000000000420, tmp_path)
    assert status == 0 and verdict["category"] == "ok", verdict
    assert verdict["error_rewritten"] <= 4 * verdict["error_original"], verdict


def test_mean_of_log1p_square_is_judged_over_input_draws(tmp_path):
    """Seed 22000000000427 of the third 1,000-program run: a float32 mean of
    log(1 + a*a) over a 316 x 316 softmax. Rounding 1 + a*a (a*a ~ 1e-5) to
    float32 makes the mean 5.7e-6 too small at the program's own inputs,
    exactly what the rewritten program gives (its loop sums the logs
    accurately). XLA's reduction of the unsplit 316 x 316 logs errs by
    +4.4e-6 to +5.6e-6 on six draws of inputs, which happens to cancel most
    of it: the original errs by 1.06e-6 here but by 5.4e-6 in median over 40
    draws. At the program's own inputs alone the rewrite failed 4x the
    original; over five draws it is within 2x of it."""
    status, verdict = _replay(22000000000427, tmp_path)
    assert status == 0 and verdict["category"] == "ok", verdict
    assert verdict["draws"] == fuzz.DRAWS, verdict
    assert verdict["error_rewritten"] <= 2 * verdict["error_original"], verdict


# ----- the text-mutation fuzzer (experiments/fuzzing/fuzz_mutate.py) ---------------------------

from experiments.fuzzing import fuzz_mutate  # noqa: E402

SMALL = """HloModule m, entry_computation_layout={(f32[4,3]{1,0}, f32[3]{0})->(f32[4]{0})}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  a = f32[4,3]{1,0} parameter(0)
  b = f32[3]{0} parameter(1)
  c = f32[4,3]{1,0} broadcast(b), dimensions={1}
  d = f32[4,3]{1,0} multiply(a, c)
  z = f32[] constant(0)
  r = f32[4]{0} reduce(d, z), dimensions={1}, to_apply=add
  ROOT t = (f32[4]{0}) tuple(r)
}
"""


def test_mutations_are_deterministic_and_each_changes_the_text():
    import numpy as np

    assert fuzz_mutate.mutate(SMALL, 7) == fuzz_mutate.mutate(SMALL, 7)
    for name, mutation in fuzz_mutate.MUTATIONS.items():
        changed = [mutation(SMALL, np.random.default_rng(seed)) for seed in range(5)]
        assert any(c is not None and c != SMALL for c in changed), name


def test_the_mutation_verdicts_are_classified_strictly():
    M = fuzz_mutate.Mutant
    at = "ValueError: line 3, column 5: expected ']'"
    assert fuzz_mutate.classify(M(0, "b", "m", exla=at, xla="reject: x")) == "agree-reject"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="accept", xla="accept",
                                  optimized="accept")) == "agree-accept"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="ExlaError: internal", xla="reject: x")) \
        == "bad-exception"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="IndexError: x", xla="reject: x")) \
        == "bad-exception"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="ValueError: bad", xla="reject: x")) \
        == "no-position"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="crash", xla="died")) == "crash"
    assert fuzz_mutate.classify(M(0, "b", "m", exla=at, xla="accept")) == "disagree:exla-rejects"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="accept", xla="reject: Syntax error")) \
        == "disagree:exla-accepts"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="accept", xla="accept",
                                  optimized="output: reject: x")) == "optimized-rejected"
    assert fuzz_mutate.classify(M(0, "b", "m", exla="accept",
                                  xla="reject: Unknown opcode: nonsense")) \
        == "intended-laxer:unknown-opcode"


def test_mutation_slice_is_refused_cleanly_or_agrees_with_xla(tmp_path):
    """~100 mutants of eight generated programs' HLO (before and after exla's
    rewrite): each is a clean ValueError with line and column or accepted,
    exla's verdict is XLA's (but for the named, intended differences), what
    exla accepts goes through optimize_hlo into a module XLA accepts, and no
    child process dies."""
    summary = fuzz_mutate.run(96, seed=26, out_dir=tmp_path, verbose=False)
    print("\n" + summary.report())
    assert len(summary.mutants) == 96
    assert summary.bases_rejected == [], summary.report()
    assert summary.failures() == [], summary.report()
    assert summary.count("agree-reject") >= 40, summary.report()
    assert summary.count("agree-accept") >= 1, summary.report()
