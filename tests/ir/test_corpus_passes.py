"""Every pass on every corpus program, at a threshold that forces splitting.

For each program of `experiments/corpus` (TensorFlow, tf_keras, GPflow, TFP, JAX,
flax, optax and constants of every rank and type):

(a) the default pipeline (every pass exla has) at `forced_threshold` (an
    eighth of the largest tensor, 64 B .. 16 KB), and each pass alone at the
    same threshold, give modules that exla's verifier and XLA's (its parser,
    HLO importer and MLIR verifier, without exla's, in a child process) both
    accept;
(b) the pipeline's module, run with TensorFlow's XLA on the program's
    inputs, gives the original module's results: integer and bool results
    equal; floating-point results as close to a float64 run of the same
    module as the original is (f32 programs widened to f64, where the
    program permits: no bit casts, random bits or custom calls, at most
    MAX_FLOAT64_INSTRUCTIONS instructions), else within the program's
    tolerance;
(c) most programs are really rewritten at that threshold, and every one
    that is not says why (the splitter's own messages, or only parameters
    and constants are above the threshold).
"""

from __future__ import annotations

import logging

import pytest

from experiments.corpus import checks, programs
from tests._extension import load_extension  # noqa: E402

_exla = load_extension()

import exla  # noqa: E402

NAMES = programs.names()
MAX_FLOAT64_INSTRUCTIONS = 2000


@pytest.fixture(scope="module")
def xla_verdicts():
    from experiments.corpus.xla_verdicts import XlaVerdicts

    verdicts = XlaVerdicts()
    yield verdicts
    verdicts.close()


def _quietly(fn, *args, **kwargs):
    # optimize_hlo warns when a threshold cannot be met; the test reads the
    # report instead.
    logger = logging.getLogger("exla")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return fn(*args, **kwargs)
    finally:
        logger.setLevel(level)


def _check_both_verifiers(label, text, xla_verdicts):
    accepted, message = checks.exla_verdict(text)
    assert accepted, f"{label}: exla's verifier rejects the output: {message}"
    verdict = xla_verdicts.verdict(text)
    assert verdict.accepted, f"{label}: XLA rejects the output: {verdict.message}"


@pytest.mark.parametrize("name", NAMES)
def test_every_pass_output_verifies(name, xla_verdicts):
    program = programs.get(name)
    text = program.hlo_text
    threshold = checks.forced_threshold(text)
    seen = {text}
    out, _ = _quietly(exla.optimize_hlo, text, threshold=threshold, strict=False)
    for label, passes in [("pipeline", None)] + [(p, [p]) for p in exla.optimize.available_passes()]:
        if passes is not None:
            out, _ = _quietly(exla.optimize_hlo, text, threshold=threshold, passes=passes,
                              strict=False)
        if out in seen:
            continue
        seen.add(out)
        _check_both_verifiers(f"{name}: {label} at threshold {threshold} B", out, xla_verdicts)


@pytest.mark.parametrize("name", NAMES)
def test_rewritten_program_computes_the_same(name):
    program = programs.get(name)
    text = program.hlo_text
    threshold = checks.forced_threshold(text)
    out, report = _quietly(exla.optimize_hlo, text, threshold=threshold, strict=False)
    if not report.changed:
        assert out == text
        pytest.skip(f"unchanged at {threshold} B (see test_most_programs_are_rewritten)")
    original = checks.run_hlo(text, program.inputs)
    rewritten = checks.run_hlo(out, program.inputs)
    assert len(original) == len(rewritten) == len(program.reference_outputs)
    reference64 = None
    # A float64 run costs one more XLA compilation: skipped for the largest
    # modules (MobileNetV2's gradient: about 20 s on this machine), which
    # are compared with the original within the program's tolerance.
    variant = (checks.float64_variant(program)
               if program.instruction_count <= MAX_FLOAT64_INSTRUCTIONS else None)
    if variant is not None:
        reference64 = checks.run_hlo(*variant)
    failures = [c for c in checks.compare_outputs(original, rewritten, reference64,
                                                  rtol=program.rtol, atol=program.atol)
                if not c.ok]
    if failures:
        pytest.fail(f"{name} rewritten at {threshold} B ({', '.join(report.changed_passes)}) "
                    "differs from the original: " +
                    "; ".join(f"output {c.index} ({c.how}): {c.detail}" for c in failures),
                    pytrace=False)


def test_most_programs_are_rewritten():
    rewritten, unchanged = [], {}
    for name in filter(programs.buildable, NAMES):
        program = programs.get(name)
        threshold = checks.forced_threshold(program.hlo_text)
        _, report = _quietly(exla.optimize_hlo, program.hlo_text, threshold=threshold,
                             strict=False)
        if report.changed:
            rewritten.append(name)
        else:
            reason = checks.unchanged_reason(program.hlo_text, threshold, report)
            assert reason, f"{name} is unchanged at {threshold} B and exla says nothing about why"
            unchanged[name] = reason
    counted = len(rewritten) + len(unchanged)
    print(f"\n{len(rewritten)} of {counted} programs rewritten at the forced threshold")
    for name, reason in unchanged.items():
        print(f"  unchanged {name}: {reason}")
    assert len(rewritten) >= 0.8 * counted, (rewritten, unchanged)
