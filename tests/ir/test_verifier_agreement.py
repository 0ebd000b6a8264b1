"""exla's verifier agrees with XLA's on every corpus program and its mutants.

For each program of `experiments/corpus` and each of its deterministic mutants
(`experiments/corpus/mutations.py`: a dropped operand, an instruction renamed onto
its neighbour's name, a changed dimension or element type, a changed opcode,
an undefined operand, a constant whose literal is a name, a parameter number
out of range, an unknown attribute, a dropped ROOT, the text cut in half),
exla's verdict (`exla._core.verify`: accept or ValueError) must equal XLA's
(`exla.bridge.xla.verify_without_exla`: XLA's parser, HLO -> StableHLO
importer and MLIR verifier, in a child process because XLA's parser aborts
on some texts; an abort counts as a rejection). A disagreement fails the
test with both messages, unless it is one of the listed exceptions,
`experiments/corpus/checks.py`'s STRICTER_ON_PURPOSE: places where XLA's text path
is lax and exla is stricter on purpose (each with its reason).
"""

from __future__ import annotations

import collections

import pytest

from experiments.corpus import checks, programs
from experiments.corpus.mutations import mutants
from tests._extension import load_extension  # noqa: E402

_exla = load_extension()

NAMES = programs.names()


@pytest.fixture(scope="module")
def xla_verdicts():
    from experiments.corpus.xla_verdicts import XlaVerdicts

    verdicts = XlaVerdicts()
    yield verdicts
    verdicts.close()


@pytest.mark.parametrize("name", NAMES)
def test_exla_and_xla_agree(name, xla_verdicts):
    program = programs.get(name)
    cases = [("original", program.hlo_text)] + mutants(program.hlo_text)
    disagreements, excused = [], []
    for kind, text in cases:
        exla_ok, exla_message = checks.exla_verdict(text)
        xla = xla_verdicts.verdict(text)
        verdict = checks.classify(text, exla_ok, exla_message, xla.accepted)
        if verdict == "agree":
            continue
        if verdict.startswith("exception: "):
            excused.append(f"{kind} ({verdict[len('exception: '):]})")
        else:
            disagreements.append(
                f"{kind}: exla {'accepts' if exla_ok else 'rejects'}, XLA "
                f"{'accepts' if xla.accepted else 'rejects'}\n"
                f"    exla: {exla_message[:600] or '(accepted)'}\n"
                f"    XLA:  {xla.message[:600] or '(accepted)'}")
    if disagreements:
        pytest.fail(f"{name}: {len(disagreements)} of {len(cases)} verdicts differ:\n"
                    + "\n".join(disagreements), pytrace=False)
    if excused:
        print(f"\n{name}: listed exceptions: {', '.join(excused)}")


def test_mutants_are_bounded_deterministic_and_mostly_invalid(xla_verdicts):
    """The mutants probe rejection: most are invalid for XLA, some stay valid."""
    kinds = collections.Counter()
    xla_rejects = 0
    for name in ("kernel_matvec", "while_cond", "jax_control_flow"):
        text = programs.get(name).hlo_text
        first, second = mutants(text), mutants(text)
        assert first == second
        assert 8 <= len(first) <= 16
        for kind, mutated in first:
            kinds[kind] += 1
            xla_rejects += not xla_verdicts.verdict(mutated).accepted
    assert xla_rejects >= 0.6 * sum(kinds.values()), kinds
    assert {"drop-operand", "rename-collide", "change-dimension", "truncate",
            "binary-to-unary-opcode", "unknown-attribute"} <= set(kinds), kinds
